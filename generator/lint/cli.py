"""The ``lint`` subcommand: check Python files against the tips, fix, report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.command import Command


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


def _add_lint(p: argparse.ArgumentParser) -> None:
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


COMMANDS = {
    "lint": Command(
        "Check Python files against the tips (exit 1 on findings); --fix applies safe fixes.",
        _add_lint,
        cmd_lint,
    ),
}
