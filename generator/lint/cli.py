"""The ``lint`` subcommand: check Python files against the tips, fix, report; list and
explain the rules."""

from __future__ import annotations

import argparse
import sys

from generator.command import Command
from generator.lint.report import FORMATS

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


def cmd_lint(args: argparse.Namespace) -> int:
    from generator.lint import api, report
    from generator.lint.engine import LintUsageError

    if args.explain:
        return _explain(args.explain, args.lang)
    if args.list_rules:
        return _list_rules(args.format, args.lang)
    if not args.paths:
        raise LintUsageError("no_paths")
    run = api.run(  # bad codes or configuration: exit status 2
        args.paths,
        select=args.select,
        ignore=args.ignore,
        fix=args.fix,
        diff=args.diff,
        unsafe=args.unsafe_fixes,
        lang=args.lang,
        config=args.config,
        isolated=args.isolated,
    )
    report.write(run, args.format, sys.stdout, sys.stderr, _version())
    return run.exit_code


def _list_rules(fmt: str, lang: str) -> int:
    from generator.lint import report
    from generator.lint.rules import RULES

    sys.stdout.write(report.rule_list(RULES, "json" if fmt == "json" else "text", lang))
    return 0


def _explain(code: str, lang: str) -> int:
    from generator.lint import report
    from generator.lint.explain import as_text, explain, find_rule

    rule = find_rule(code)
    labels = report.labels_for(lang)
    sys.stdout.write(
        as_text(explain(rule, lang), labels, report.rule_url(rule.code), report.tip_url(rule.tip))
    )
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
        choices=FORMATS,
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
