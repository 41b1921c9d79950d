"""Command-line interface: assemble the capabilities' subcommands, run one, map known errors
to exit codes.

Exit codes: 0 success, 1 invalid records / stale files / failed run / nothing found,
2 bad usage or input or a missing extra, 130 interrupted. User errors print one line, never a
traceback. Commands import torch only when they need it; one that needs an extra the install
lacks (torch, MkDocs), or a checkout, says so in one line before it starts.

Each capability's ``cli`` module defines its own commands, in its ``COMMANDS`` in the order of
``--help`` (`generator.command.Command`); `CAPABILITIES` lists those modules in order. A new
command is one entry in its capability's ``COMMANDS``; a new capability, one line in
`CAPABILITIES`. The commands that span capabilities live here, in `COMMANDS`, and come first:
``validate`` (the records against the lint rules and the composer's template blocks),
``search`` (the records and the lint rules), ``snippets`` and ``check`` (the records'
generated files and the composer's).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, NoReturn

from generator.bench import cli as bench
from generator.command import (
    CHECKOUT,
    Command,
    extra_of,
    install_hint,
    positive_int,
    print_line,
    relative,
    unmet,
)
from generator.compose import cli as compose
from generator.doctor import cli as doctor
from generator.errors import InvalidRecords, UserError
from generator.lint import cli as lint
from generator.records import cli as records
from generator.site import cli as site

if TYPE_CHECKING:
    from generator.records.search import Document

#: The capabilities' ``cli`` modules, in the order of ``--help``: each offers its ``COMMANDS``.
CAPABILITIES: tuple[ModuleType, ...] = (records, site, bench, compose, lint, doctor)


def cmd_validate(args: argparse.Namespace) -> int:
    from generator.compose.tips import block_problems
    from generator.doctor.tips import finding_tip_problems
    from generator.lint.tips import rule_code_problems
    from generator.records.load import validate

    targets = [Path(p) for p in args.paths] or None
    tips, problems = validate(
        targets, cross_checks=[rule_code_problems, block_problems, finding_tip_problems]
    )
    if problems:
        raise InvalidRecords(problems)
    print_line(f"{len(tips)} record(s) valid.")
    return 0


def _add_validate(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: tips/)")


def search_documents(lang: str) -> list[Document]:
    """Every page ``python -m generator search`` finds in ``lang``: the records' (tips,
    problems, checklist, tools and guides) and the lint rules'."""
    from generator.lint.docs import search_documents as rule_documents
    from generator.records.load import load_tips
    from generator.records.problems import load_entry_points
    from generator.records.search import record_documents

    tips = load_tips()
    try:
        entry_points = load_entry_points(frozenset(str(t.id) for t in tips))
    except InvalidRecords:
        entry_points = None  # search still works on the tips
    return [*record_documents(tips, entry_points, lang), *rule_documents(lang, tips)]


def cmd_search(args: argparse.Namespace) -> int:
    import json

    from generator.errors import NotFound
    from generator.records.search import detect_lang
    from generator.records.search import search_documents as rank

    query = " ".join(args.query)
    lang = args.lang = detect_lang(query) if args.lang == "auto" else args.lang  # errors too
    hits = rank(search_documents(lang), query, lang=lang, limit=args.limit)
    if args.json:
        print_line(json.dumps([h.__dict__ for h in hits], ensure_ascii=False, indent=2))
        return 0 if hits else 1
    if not hits:
        shown = query if len(query) <= 60 else f"{query[:60]}…"
        raise NotFound(f"nothing matches '{shown}'", key="nothing_matches", query=shown)
    names = [h.id if h.kind == "tip" else h.page for h in hits]
    width = max(len(n) for n in names)
    for rank_, (hit, name) in enumerate(zip(hits, names, strict=True), 1):
        print_line(f"{rank_:>2}. {name:<{width}}  {hit.title}")
        if hit.summary:
            print_line(f"    {'':<{width}}  {hit.summary}")
        if hit.command and hit.kind == "tool":
            print_line(f"    {'':<{width}}  python -m generator {hit.command} --help")
    return 0


def _add_search(p: argparse.ArgumentParser) -> None:
    from generator.records.query import MAX_CHARS, MAX_TERMS

    p.add_argument(
        "query",
        nargs="+",
        help="words, API names (no_grad), rule codes or Chinese (显存); the first "
        f"{MAX_CHARS:,} characters and {MAX_TERMS} terms count",
    )
    p.add_argument(
        "--lang",
        choices=["auto", "en", "zh"],
        default="auto",
        help="language to search (default: zh for Chinese queries, else en)",
    )
    p.add_argument("--limit", type=positive_int, default=10, help="most results (default: 10)")
    p.add_argument("--json", action="store_true", help="print results as JSON")


def generated_files() -> dict[Path, str]:
    """The generated files beside the records': the composer's typed option fields."""
    from generator.compose.codegen import generated_files as compose_files

    return compose_files()


def cmd_snippets(args: argparse.Namespace) -> int:
    from generator.records.generated import write_atomic, write_files
    from generator.records.load import load_tips
    from generator.records.snippets import snippet_files

    if args.ids:
        # Only these tips' snippets: handy while writing a tip when other records are mid-edit.
        from generator import paths

        files = snippet_files(load_tips([paths.TIPS / f"{i}.yaml" for i in args.ids]))
        for path, content in files.items():
            write_atomic(path, content)
            print_line(f"wrote {relative(path)}")
        return 0
    touched = write_files(load_tips(), extra=generated_files())
    for path in touched:
        print_line(f"wrote {relative(path)}" if path.exists() else f"removed {relative(path)}")
    print_line(
        f"{len(touched)} file(s) changed." if touched else "All generated files are up to date."
    )
    return 0


def _add_snippets(p: argparse.ArgumentParser) -> None:
    p.add_argument("ids", nargs="*", metavar="ID", help="only these tips' snippets (default: all)")


def cmd_check(args: argparse.Namespace) -> int:
    from generator.records.generated import stale_files
    from generator.records.load import load_tips

    stale = stale_files(load_tips(), extra=generated_files())
    for path, why in stale:
        sys.stderr.write(f"stale: {relative(path)} ({why})\n")
    if stale:
        sys.stderr.write(
            f"{len(stale)} generated file(s) are stale: run `python -m generator snippets`.\n"
        )
        return 1
    print_line("All generated files are up to date.")
    return 0


#: The commands that span capabilities, first in ``--help``.
COMMANDS = {
    "validate": Command(
        "Check tip records against the schema and each other.", _add_validate, cmd_validate
    ),
    "search": Command(
        "Search the tips, problem pages, tools and lint rules, best match first.",
        _add_search,
        cmd_search,
    ),
    "snippets": Command(
        "Write the generated files: snippets/, tips/schema.json and the composer's option fields.",
        _add_snippets,
        cmd_snippets,
        needs=(CHECKOUT,),
    ),
    "check": Command(
        "Exit 1 naming each generated file that is stale.",
        lambda p: None,
        cmd_check,
        needs=(CHECKOUT,),
    ),
}


def commands(
    own: Mapping[str, Command] | None = None, capabilities: Sequence[ModuleType] | None = None
) -> dict[str, Command]:
    """Every subcommand, by name, in the order of ``--help``: ``own`` (default: this module's
    `COMMANDS`), then the ``COMMANDS`` of each of ``capabilities`` (default: `CAPABILITIES`).

    Raises:
        ValueError: two of them define the same command.
    """
    own = COMMANDS if own is None else own
    modules = CAPABILITIES if capabilities is None else capabilities
    found: dict[str, Command] = {}
    for source in (own, *(module.COMMANDS for module in modules)):
        for name, command in source.items():
            if name in found:
                raise ValueError(f"two capabilities define the command {name!r}")
            found[name] = command
    return found


class _Parser(argparse.ArgumentParser):
    """argparse's errors in one line and a hint, not its usage block (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m generator`` (its subcommands' are `_Parser`s too)."""
    parser = _Parser(
        prog="python -m generator",
        description="The verified PyTorch tips knowledge base: validate the records in tips/, "
        "search and show tips, and write the generated files.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in commands().items():
        p = sub.add_parser(name, help=command.help, description=command.help)
        p.set_defaults(handler=command.handler, _name=name, _needs=command.needs)
        command.add_arguments(p)
    return parser


def _lang(args: argparse.Namespace) -> str:
    """The language of a command's messages: its ``--lang`` (search's once detected), else
    English."""
    lang = getattr(args, "lang", "en")
    return lang if lang in ("en", "zh") else "en"


def _label(args: argparse.Namespace, key: str, **params: object) -> str:
    """The label ``key`` in the command's language."""
    from generator.records.ui import fill, labels

    L = labels()[_lang(args)]
    return fill(L[key], L, params)


def error_line(err: UserError, lang: str) -> str:
    """The one line of ``err``: in ``lang`` from ui.yaml where it names a label, else in
    English."""
    if err.key is None:
        return f"error: {err}"
    from generator.records.ui import fill, labels

    L = labels()[lang]
    return fill(L["cli_err_prefix"], L, {"message": fill(L["cli_err_" + err.key], L, err.params)})


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        why = unmet(args._name, args._needs)  # before anything is read or written
        if why:
            raise UserError(why)
        return args.handler(args)
    except InvalidRecords as err:
        for problem in err.problems:
            sys.stderr.write(f"{problem}\n")
        summary = _label(args, "cli_err_records", n=len(err.problems))
        sys.stderr.write(f"{summary}\n")
        return err.exit_code
    except UserError as err:
        sys.stderr.write(f"{error_line(err, _lang(args))}\n")
        return err.exit_code
    except ModuleNotFoundError as err:
        extra = extra_of(err.name or "")
        if extra is None:
            raise
        sys.stderr.write(
            f"error: pytorch-tips {args._name} needs the [{extra}] extra ({err.name} is not "
            f"installed): {install_hint(extra)}\n"
        )
        return 2
    except KeyboardInterrupt:
        interrupted = _label(args, "cli_interrupted")
        sys.stderr.write(f"{interrupted}\n")
        return 130
    except BrokenPipeError:
        return 0
