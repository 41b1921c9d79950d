"""The ``lint`` subcommand: check Python files against the tips, fix, report; list and
explain the rules."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.command import Command

EPILOG = """\
output:
  text     path:line:col: CODE [severity] message (tip: TIP-ID), then a summary line
  json     a list of {path, line, column, rule, tip, message, severity, fixable, fix}
  sarif    SARIF 2.1.0 for GitHub code scanning (helpUri: the rule's page)
  Files that cannot be checked are reported on standard error, one line each.

suppressing findings:
  # noqa: PTT020          on any line of a statement: that rule, for that statement
  # noqa                  every rule, for that statement
  # pytorch-tips: noqa    on a line of its own: every rule, in the whole file
  # pytorch-tips: noqa: PTT020,PTT021    those rules, in the whole file
  pyproject.toml (the nearest one above each file, or --config FILE):
    [tool.pytorch-tips.lint]
    select = ["PTT0"]     ignore = ["PTT049"]
    per-file-ignores = { "tests/*" = ["PTT020"] }
  --select replaces the configured select; --ignore adds to the configured ignore.
  Rules marked opt-in (--list-rules) run only when a selection names them.

fixes:
  --fix applies safe fixes (they keep the program's behaviour); add --unsafe-fixes for
  fixes that can change it (such as weights_only=True on torch.load). --diff shows them.

exit status:
  0  no findings (or --list-rules / --explain)
  1  findings, or a file that could not be checked
  2  usage error: a missing path, an unknown rule code, a bad configuration
"""


def _labels(lang: str):  # type: ignore[no-untyped-def]
    from generator.records.ui import labels

    return labels()[lang]


def cmd_lint(args: argparse.Namespace) -> int:
    from generator.lint import report
    from generator.lint.engine import LintUsageError, lint_paths

    if args.explain:
        return _explain(args.explain, args.lang)
    if args.list_rules:
        from generator.lint.rules import RULES

        fmt = "json" if args.format == "json" else "text"
        sys.stdout.write(report.rule_list(RULES, fmt, args.lang))
        return 0
    if not args.paths:
        raise LintUsageError("give a file or folder to check (or --list-rules, --explain CODE)")
    L = _labels(args.lang)
    options = dict(
        select=args.select,
        ignore=args.ignore,
        lang=args.lang,
        config=args.config,
        isolated=args.isolated,
    )
    result = lint_paths(args.paths, **options)  # bad codes or configuration: exit status 2
    sys.stderr.write(report.error_lines(result.errors))
    fixed = 0
    if args.diff or args.fix:
        from generator.lint.fix import fix_files, write_atomic

        changes = fix_files(result.sources, result.rules, unsafe=args.unsafe_fixes)
        if args.diff:  # show the fixes, write nothing
            for change in changes:
                sys.stdout.write(change.diff())
            count = sum(c.fixed for c in changes)
            sys.stderr.write(
                L["lint_would_fix"].format(
                    findings=report.counted(L, "finding", count),
                    files=report.counted(L, "file", len(changes)),
                )
                + "\n"
            )
            return 1 if changes or result.errors else 0
        for change in changes:
            write_atomic(Path(change.path), change.after)
        fixed = sum(c.fixed for c in changes)
        if changes:  # report what is left
            result = lint_paths(args.paths, **options)
    if args.format == "json":
        sys.stdout.write(report.json_report(result))
    elif args.format == "sarif":
        sys.stdout.write(report.sarif(result, _sarif_rules(args), _version(), args.lang))
    else:
        sys.stdout.write(report.text(result, fixed, L, args.unsafe_fixes))
    return 1 if result.findings or result.errors else 0


def _sarif_rules(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """Every rule that can appear in the run: the selection, opt-in rules included."""
    from generator.lint.engine import select_rules
    from generator.lint.rules import RULES

    chosen = select_rules(args.select or "ALL", args.ignore)
    return [r for r in RULES if r in chosen or r.default]


def _explain(code: str, lang: str) -> int:
    from generator.lint import report
    from generator.lint.explain import as_text, explain, find_rule

    rule = find_rule(code)
    text = as_text(
        explain(rule, lang), _labels(lang), report.rule_url(rule.code), report.tip_url(rule.tip)
    )
    sys.stdout.write(text)
    return 0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytorch-tips")
    except PackageNotFoundError:
        return "0"


def _add_lint(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    p.add_argument("paths", nargs="*", metavar="PATH", help="files, or folders searched for *.py")
    p.add_argument(
        "--format",
        choices=["text", "json", "sarif"],
        default="text",
        help="output format (default: text; --list-rules takes text or json)",
    )
    p.add_argument(
        "--select",
        metavar="CODES",
        help="only these rule codes or prefixes, comma-separated (ALL: every rule)",
    )
    p.add_argument(
        "--ignore", metavar="CODES", help="skip these rule codes or prefixes, comma-separated"
    )
    p.add_argument("--fix", action="store_true", help="apply the safe fixes to the files")
    p.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff, also the fixes that can change behaviour",
    )
    p.add_argument("--diff", action="store_true", help="print the fixes as a diff, write nothing")
    p.add_argument(
        "--lang", choices=["en", "zh"], default="en", help="language of the messages (default: en)"
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        help="read [tool.pytorch-tips.lint] from this pyproject.toml for every file",
    )
    p.add_argument(
        "--isolated", action="store_true", help="ignore every pyproject.toml configuration"
    )
    p.add_argument(
        "--list-rules", action="store_true", help="list the rules (text, or --format json)"
    )
    p.add_argument(
        "--explain", metavar="CODE", help="explain one rule, with an example and its tip"
    )


COMMANDS = {
    "lint": Command(
        "Check Python files against the tips (exit 1 on findings); --fix applies safe fixes.",
        _add_lint,
        cmd_lint,
    ),
}
