"""Command-line interface: parse arguments, call the library, map known errors to exit codes.

Exit codes: 0 success, 1 invalid records / stale files / failed run / nothing found,
2 bad usage or input, 130 interrupted. User errors print one line, never a traceback.
Commands import torch only when they need it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from generator import paths
from generator.errors import InvalidRecords, NotFound, UserError
from generator.taxonomy import CATEGORIES, DEVICES, TAGS

Handler = Callable[[argparse.Namespace], int]


def _print(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(paths.ROOT))
    except ValueError:
        return str(path)


# --- commands -------------------------------------------------------------------------------


def cmd_validate(args: argparse.Namespace) -> int:
    from generator.records import validate

    tips, problems = validate([Path(p) for p in args.paths] or None)
    if problems:
        raise InvalidRecords(problems)
    _print(f"{len(tips)} record(s) valid.")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from generator.records import load_tips

    tips = [
        t
        for t in load_tips()
        if (args.category is None or t.category == args.category)
        and (args.tag is None or args.tag in t.tags)
        and (args.device is None or args.device in t.hardware.devices)
    ]
    if args.json:
        _print(json.dumps([t.model_dump(mode="json") for t in tips], ensure_ascii=False, indent=2))
        return 0
    if not tips:
        raise NotFound("no tip matches these filters")
    width = max(len(t.id or "") for t in tips)
    for t in tips:
        devices = ",".join(t.hardware.devices)
        title = t.title.get(args.lang)
        _print(f"{t.id:<{width}}  {t.category:<15} {devices:<14} {title}")
    _print(f"\n{len(tips)} tip(s).")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from generator.records import get_tip
    from generator.terminal import render_tip

    sys.stdout.write(render_tip(get_tip(args.id), args.lang))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from generator.records import load_tips
    from generator.search import detect_lang, problem_keywords, search

    query = " ".join(args.query)
    tips = load_tips()
    lang = detect_lang(query) if args.lang == "auto" else args.lang
    hits = search(tips, query, lang=lang, limit=args.limit, keywords=problem_keywords(tips, lang))
    if args.json:
        _print(json.dumps([h.__dict__ for h in hits], ensure_ascii=False, indent=2))
        return 0 if hits else 1
    if not hits:
        raise NotFound(f"no tip matches {query!r}")
    width = max(len(h.id) for h in hits)
    for rank, hit in enumerate(hits, 1):
        _print(f"{rank:>2}. {hit.id:<{width}}  {hit.title}")
        _print(f"    {'':<{width}}  {hit.summary}")
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    from generator.scaffold import new_tip

    path = new_tip(args.id, args.category)
    _print(f"created {_rel(path)}")
    _print("Fill in every TODO, then run: python -m generator validate " + _rel(path))
    return 0


def cmd_snippets(args: argparse.Namespace) -> int:
    from generator.generated import write_atomic, write_files
    from generator.records import load_tips
    from generator.snippets import snippet_files

    if args.ids:
        # Only these tips' snippets: handy while writing a tip when other records are mid-edit.
        files = snippet_files(load_tips([paths.TIPS / f"{i}.yaml" for i in args.ids]))
        for path, content in files.items():
            write_atomic(path, content)
            _print(f"wrote {_rel(path)}")
        return 0
    touched = write_files(load_tips())
    for path in touched:
        _print(f"wrote {_rel(path)}" if path.exists() else f"removed {_rel(path)}")
    _print(f"{len(touched)} file(s) changed." if touched else "All generated files are up to date.")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from generator.generated import stale_files
    from generator.records import load_tips

    stale = stale_files(load_tips())
    for path, why in stale:
        sys.stderr.write(f"stale: {_rel(path)} ({why})\n")
    if stale:
        sys.stderr.write(
            f"{len(stale)} generated file(s) are stale: run `python -m generator snippets`.\n"
        )
        return 1
    _print("All generated files are up to date.")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from generator.harness import run_variant
    from generator.records import get_tip
    from generator.snippets import snippet_path

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
        filename = _rel(snippet_path(tip.id or "", name))
        result = run_variant(
            variant.code,
            variant.checks,
            filename,
            device=args.device,
            launch=variant.launch,
            probe=variant.probe,
        )
        sys.stdout.write(result.output)
        _print(f"{'ok' if result.ok else 'FAILED'}: {args.id} {name} on {args.device}")
        failed += not result.ok
    return 1 if failed else 0


def cmd_build(args: argparse.Namespace) -> int:
    import time

    from generator.records import load_tips
    from generator.site import build_site, write_pages

    start = time.perf_counter()
    tips = load_tips()  # fail here, with file:line problems, before MkDocs starts
    write_pages(tips)
    rc = build_site(strict=True, site_dir=Path(args.site_dir) if args.site_dir else None)
    if rc:
        sys.stderr.write("error: mkdocs build --strict failed (see the messages above)\n")
        return 1
    where = args.site_dir or "site/"
    _print(
        f"Built {len(tips)} tips x 2 languages into {where} in {time.perf_counter() - start:.1f} s."
    )
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from generator.site import serve_site

    if not args.no_build and cmd_build(argparse.Namespace(site_dir=None)):
        return 1
    serve_site(paths.ROOT / "site", host=args.host, port=args.port)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    import time

    from generator import bench, results
    from generator.records import get_tip, load_tips

    start = time.perf_counter()
    # Everything that can fail without measuring fails first, in one line: where the
    # results go, the device, the tips, the previous file and whether it can be merged.
    out = Path(args.out) if args.out else results.results_path(args.device)
    results.check_writable(out)
    bench.check_device(args.device)
    tips = [get_tip(i) for i in args.ids] if args.ids else load_tips()
    measured, skipped = bench.benchmarkable(tips, args.device)
    for tip in tips:
        if tip.bench is None and args.ids:
            raise UserError(f"{tip.id} has no bench section: nothing to measure")
    for tip in skipped:
        assert tip.bench is not None and tip.bench.not_measurable is not None
        reason = tip.bench.not_measurable.reason.en.splitlines()[0]
        _print(f"skip {tip.id}: not measurable on {args.device}: {reason}")
    if not measured:
        raise NotFound(f"no tip to measure on {args.device}")
    old = results.read_results(out) if out.is_file() else None
    threads = args.threads or 1
    plan = bench.Plan.make(args.quick, args.replicates)
    env = bench.environment(args.device, threads)
    replace = not args.ids
    if not replace:
        results.check_mergeable(old, args.device, env, bench.settings(plan))
    writer = results.ResultsWriter(out, old, replace=replace)
    try:
        run = bench.run(
            measured,
            device=args.device,
            quick=args.quick,
            num_threads=threads,
            replicates=args.replicates,
            progress=not args.no_progress,
            env=env,
            save=writer,
        )
    except KeyboardInterrupt:
        if writer.measured:
            n = writer.measured
            sys.stderr.write(f"interrupted: {_rel(out)} keeps the {n} tip(s) measured so far\n")
        raise
    writer.finish(run)
    failed = 0
    width = max(len(f"{t.id} (compute-bound)") for t in measured)
    for tip_id in run.results:
        for regime, res in run.regimes(tip_id):
            name = tip_id if regime == "default" else f"{tip_id} ({regime})"
            if res.error:
                failed += 1
                _print(f"{name:<{width}}  FAILED: {res.error}")
                continue
            assert res.time is not None
            t = res.time
            line = (
                f"{name:<{width}}  {t.before.median_s * 1e3:9.3f} ms -> "
                f"{t.after.median_s * 1e3:9.3f} ms  x{t.ratio:.2f} ({t.low:.2f}-{t.high:.2f})"
                f"  {t.verdict}"
            )
            if res.memory is not None:
                m = res.memory
                line += f"  | {m.before_bytes} -> {m.after_bytes} bytes {m.verdict}"
            _print(line)
    elapsed = time.perf_counter() - start
    _print(f"\nwrote {_rel(out)}: {len(run.results)} tip(s) measured in {elapsed:.0f} s.")
    return 1 if failed else 0


def cmd_compose(args: argparse.Namespace) -> int:
    from generator.compose import (
        OutputExists,
        compose,
        options_from_args,
        read_tips_by_feature,
        write_script,
    )

    options = options_from_args(args)  # contradictions fail here, before anything is written
    output = Path(args.output) if args.output else None
    if output is not None and output.exists() and not args.force:
        raise OutputExists(f"{args.output} exists: use --force to overwrite it")
    name = output.name if output else "train.py"
    text = compose(options, read_tips_by_feature(), script_name=name)
    if output is None:
        sys.stdout.write(text)
        return 0
    write_script(text, output, force=args.force)
    sys.stderr.write(f"wrote {args.output}\n")
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from generator.lint import report
    from generator.lint.engine import lint_paths, select_rules
    from generator.lint.fix import fix_files, write_atomic

    rules = select_rules(args.select, args.ignore)  # a bad code fails here, exit status 2
    result = lint_paths(args.paths, select=args.select, ignore=args.ignore)
    sys.stderr.write(report.error_lines(result.errors))
    fixed = 0
    if args.diff or args.fix:
        changes = fix_files(result.sources, rules)
        if args.diff:  # show the safe fixes, write nothing
            for change in changes:
                sys.stdout.write(change.diff())
            count = sum(c.fixed for c in changes)
            sys.stderr.write(f"Would fix {count} finding(s) in {len(changes)} file(s).\n")
            return 1 if changes or result.errors else 0
        for change in changes:
            write_atomic(Path(change.path), change.after)
        fixed = sum(c.fixed for c in changes)
        if changes:  # report what is left
            result = lint_paths(args.paths, select=args.select, ignore=args.ignore)
    if args.format == "json":
        sys.stdout.write(report.json_report(result))
    elif args.format == "sarif":
        sys.stdout.write(report.sarif(result, rules, version=_version()))
    else:
        sys.stdout.write(report.text(result, fixed))
    return 1 if result.findings or result.errors else 0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytorch-tips")
    except PackageNotFoundError:
        return "0"


# --- parser ---------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m generator``."""
    parser = argparse.ArgumentParser(
        prog="python -m generator",
        description="The verified PyTorch tips knowledge base: validate the records in tips/, "
        "search and show tips, and write the generated files.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, handler: Handler, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(handler=handler)
        return p

    p = add("validate", cmd_validate, "Check tip records against the schema and each other.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: tips/)")

    p = add("list", cmd_list, "List tips, optionally filtered.")
    p.add_argument("--category", choices=sorted(CATEGORIES), help="only this category")
    p.add_argument("--tag", choices=sorted(TAGS), metavar="TAG", help="only tips with this tag")
    p.add_argument("--device", choices=sorted(DEVICES), help="only tips that run on this device")
    p.add_argument("--lang", choices=["en", "zh"], default="en", help="title language")
    p.add_argument("--json", action="store_true", help="print the full records as JSON")

    p = add("show", cmd_show, "Show one tip in the terminal: why, caveats, before/after code.")
    p.add_argument("id", help="tip id (the file name in tips/ without .yaml)")
    p.add_argument("--lang", choices=["en", "zh"], default="en", help="language (default: en)")

    p = add("search", cmd_search, "Full-text search over titles, summaries, prose, tags and code.")
    p.add_argument("query", nargs="+", help="words, API names (no_grad) or Chinese (显存)")
    p.add_argument(
        "--lang",
        choices=["auto", "en", "zh"],
        default="auto",
        help="language to search (default: zh for Chinese queries, else en)",
    )
    p.add_argument("--limit", type=_positive_int, default=10, help="most results (default: 10)")
    p.add_argument("--json", action="store_true", help="print results as JSON")

    p = add("new", cmd_new, "Create tips/ID.yaml from the template (never overwrites).")
    p.add_argument("id", help="new tip id: lowercase words joined by hyphens")
    p.add_argument("--category", choices=sorted(CATEGORIES), default="training-loop")

    p = add("snippets", cmd_snippets, "Write the generated files: snippets/ and tips/schema.json.")
    p.add_argument("ids", nargs="*", metavar="ID", help="only these tips' snippets (default: all)")
    add("check", cmd_check, "Exit 1 naming each generated file that is stale.")

    p = add("build", cmd_build, "Render the pages from tips/ and build the site (strict).")
    p.add_argument("--site-dir", help="output folder (default: site/)")

    p = add("serve", cmd_serve, "Build the site, then serve it on http://127.0.0.1:8000.")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    p.add_argument("--no-build", action="store_true", help="serve the existing site/ as it is")

    p = add("bench", cmd_bench, "Measure before vs after of speed and memory tips (writes JSON).")
    p.add_argument("ids", nargs="*", metavar="ID", help="only these tips (default: all)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="default: cpu")
    p.add_argument("--quick", action="store_true", help="short timing: all tips in minutes")
    p.add_argument(
        "--out",
        metavar="FILE",
        help="results file, checked before measuring and written after every tip "
        "(default: benchmarks/results/DEVICE.json)",
    )
    p.add_argument("--threads", type=_positive_int, help="torch threads while timing (default: 1)")
    p.add_argument("--replicates", type=_positive_int, help="replicates (default: 5 quick, 7)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

    p = add(
        "compose",
        cmd_compose,
        "Write a train.py that applies the chosen tips, each block citing its tip.",
    )
    from generator.compose import add_arguments as add_compose_arguments

    add_compose_arguments(p)

    p = add(
        "lint",
        cmd_lint,
        "Check Python files against the tips (exit 1 on findings); --fix applies safe fixes.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, or folders searched for *.py")
    p.add_argument(
        "--format",
        choices=["text", "json", "sarif"],
        default="text",
        help="output format (default: text)",
    )
    p.add_argument(
        "--select", metavar="CODES", help="only these rule codes or prefixes, comma-separated"
    )
    p.add_argument(
        "--ignore", metavar="CODES", help="skip these rule codes or prefixes, comma-separated"
    )
    p.add_argument("--fix", action="store_true", help="apply the safe fixes to the files")
    p.add_argument(
        "--diff", action="store_true", help="print the safe fixes as a diff, write nothing"
    )

    p = add("run", cmd_run, "Run a tip's snippets and checks the way the test suite does.")
    p.add_argument("id", help="tip id")
    p.add_argument("--variant", choices=["before", "after"], help="only this snippet")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="default: cpu")
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except InvalidRecords as err:
        for problem in err.problems:
            sys.stderr.write(f"{problem}\n")
        sys.stderr.write(f"{err}\n")
        return err.exit_code
    except UserError as err:
        sys.stderr.write(f"error: {err}\n")
        return err.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
