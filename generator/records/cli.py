"""The records' subcommands: ``list``, ``show``, ``new`` and ``run`` (``validate``, ``search``,
``snippets`` and ``check``, which also involve the lint rules or the composer, are in
`generator.cli`). Each imports what it needs when it runs (``run`` is the only one that starts
torch, in a child process)."""

from __future__ import annotations

import argparse
import json
import sys

from generator.command import CHECKOUT, Command, print_line, relative
from generator.errors import NotFound, UserError
from generator.records.taxonomy import CATEGORIES, DEVICES, TAGS
from generator.records.ui import fill, labels


def cmd_list(args: argparse.Namespace) -> int:
    from generator.records.load import load_tips

    tips = [
        t
        for t in load_tips()
        if (args.category is None or t.category == args.category)
        and (args.tag is None or args.tag in t.tags)
        and (args.device is None or args.device in t.hardware.devices)
    ]
    if args.json:
        print_line(
            json.dumps([t.model_dump(mode="json") for t in tips], ensure_ascii=False, indent=2)
        )
        return 0
    if not tips:
        raise NotFound("no tip matches these filters", key="no_match")
    width = max(len(t.id or "") for t in tips)
    for t in tips:
        devices = ",".join(t.hardware.devices)
        title = t.title.get(args.lang)
        print_line(f"{t.id:<{width}}  {t.category:<15} {devices:<14} {title}")
    L = labels()[args.lang]
    print_line("\n" + fill(L["cli_n_tips"], L, {"n": len(tips)}))
    return 0


def _add_list(p: argparse.ArgumentParser) -> None:
    p.add_argument("--category", choices=sorted(CATEGORIES), help="only this category")
    p.add_argument("--tag", choices=sorted(TAGS), metavar="TAG", help="only tips with this tag")
    p.add_argument("--device", choices=sorted(DEVICES), help="only tips that run on this device")
    p.add_argument(
        "--lang", choices=["en", "zh"], default="en", help="language of titles and messages"
    )
    p.add_argument("--json", action="store_true", help="print the full records as JSON")


def cmd_show(args: argparse.Namespace) -> int:
    from generator.records.load import get_tip
    from generator.records.terminal import render_tip

    sys.stdout.write(render_tip(get_tip(args.id), args.lang))
    return 0


def _add_show(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="tip id (the file name in tips/ without .yaml)")
    p.add_argument("--lang", choices=["en", "zh"], default="en", help="language (default: en)")


def cmd_new(args: argparse.Namespace) -> int:
    from generator.records.scaffold import new_tip

    path = new_tip(args.id, args.category)
    print_line(f"created {relative(path)}")
    print_line("Fill in every TODO, then run: python -m generator validate " + relative(path))
    return 0


def _add_new(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="new tip id: lowercase words joined by hyphens")
    p.add_argument("--category", choices=sorted(CATEGORIES), default="training-loop")


def cmd_run(args: argparse.Namespace) -> int:
    from generator.records.harness import run_variant
    from generator.records.load import get_tip
    from generator.records.snippets import snippet_path

    tip = get_tip(args.id)
    variants = tip.variants()
    if not variants:
        raise UserError(f"{args.id} is advice only: it has no code to run")
    runs_on = set(tip.hardware.devices) | (
        {"cuda"} if "multi-gpu" in tip.hardware.devices else set()
    )
    if args.device not in runs_on:
        raise UserError(
            f"{args.id} does not run on {args.device} (hardware.devices: "
            f"{', '.join(tip.hardware.devices)}); pass --device {sorted(runs_on)[0]}"
        )
    names = [args.variant] if args.variant else list(variants)
    failed = 0
    for name in names:
        if name not in variants:
            raise UserError(f"{args.id} has no {name!r} snippet")
        variant = variants[name]
        filename = relative(snippet_path(tip.id or "", name))
        result = run_variant(
            variant.code,
            variant.checks,
            filename,
            device=args.device,
            launch=variant.launch,
            probe=variant.probe,
        )
        sys.stdout.write(result.output)
        print_line(f"{'ok' if result.ok else 'FAILED'}: {args.id} {name} on {args.device}")
        failed += not result.ok
    return 1 if failed else 0


def _add_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="tip id")
    p.add_argument("--variant", choices=["before", "after"], help="only this snippet")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="default: cpu")


COMMANDS = {
    "list": Command("List tips, optionally filtered.", _add_list, cmd_list),
    "show": Command(
        "Show one tip in the terminal: why, caveats, before/after code.", _add_show, cmd_show
    ),
    "new": Command(
        "Create tips/ID.yaml from the template (never overwrites).",
        _add_new,
        cmd_new,
        needs=(CHECKOUT,),
    ),
    "run": Command(
        "Run a tip's snippets and checks the way the test suite does.",
        _add_run,
        cmd_run,
        needs=("run",),
    ),
}
