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
  github   GitHub Actions workflow commands: annotations on the pull request
  gitlab   a GitLab Code Quality report (artifacts: reports: codequality)
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
  A fix is applied only if the file still compiles with it. --fix writes through a
  symbolic link to its target and keeps hard links.

exit status:
  0  no findings (or --list-rules / --explain)
  1  findings (with --diff: fixes to apply), or a file that could not be checked
  2  usage error: a missing path, an unknown rule code, a bad configuration; or the
     output could not be written
  3  internal error: the lint itself failed on a file (a bug; the line says which rule)
"""

#: The exit status when the output cannot be written (a closed or full standard output).
OUTPUT_ERROR = 2


def cmd_lint(args: argparse.Namespace) -> int:
    from generator.lint import api, report
    from generator.lint.messages import LintError, Message

    try:
        if args.explain is not None:
            return _emit("", _explain(args.explain, args.lang), "", args.lang) or 0
        if args.list_rules:
            return _emit("", _list_rules(args.format, args.lang), "", args.lang) or 0
        if not args.paths:
            raise LintError(Message.of("no_paths"))
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
    except LintError as err:
        _error(err.message, args.lang)
        return err.exit_code
    before, out, after = report.outputs(run, args.format, _version())
    return _emit(before, out, after, args.lang) or run.exit_code


def _error(message: object, lang: str) -> None:
    """One error line on standard error, in ``lang`` where standard error can show it."""
    from generator.lint.messages import Message, labels_for

    def line(lang: str) -> str:
        text = message.text(lang) if isinstance(message, Message) else str(message)
        return labels_for(lang)["lint_err_prefix"].format(message=text) + "\n"

    err = sys.stderr
    if err is None:
        return
    text = line(lang)
    if not _encodable(text, err):
        text = line("en")
    try:
        err.write(text)
        err.flush()
    except (OSError, ValueError):
        pass


def _encodable(text: str, stream: object) -> bool:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _emit(before: str, out: str, after: str, lang: str) -> int | None:
    """Write ``before`` to standard error, ``out`` to standard output, ``after`` to standard
    error; None when all went out, else `OUTPUT_ERROR` after one line saying why (nothing
    is written to a standard output that cannot encode ``out``). A closed pipe (``| head``)
    stops the output quietly."""
    from generator.lint.messages import Message

    stdout = sys.stdout
    if stdout is None:  # started with standard output closed
        _error(Message.of("output", reason=Message.of("stdout_closed")), lang)
        return OUTPUT_ERROR
    if out and getattr(stdout, "errors", "strict") == "strict" and not _encodable(out, stdout):
        encoding = getattr(stdout, "encoding", None) or "?"
        _error(Message.of("output_encoding", encoding=encoding), lang)
        return OUTPUT_ERROR
    _stderr(before)
    try:
        stdout.write(out)
        stdout.flush()
    except BrokenPipeError:
        _discard_stdout()
        return None
    except OSError as err:
        _discard_stdout()
        _error(Message.of("output", reason=err.strerror or str(err)), lang)
        return OUTPUT_ERROR
    _stderr(after)
    return None


def _stderr(text: str) -> None:
    if text and sys.stderr is not None:
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


def _discard_stdout() -> None:
    """Point standard output at the null device, so that what is left in its buffer does not
    fail again when Python exits."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def _list_rules(fmt: str, lang: str) -> str:
    from generator.lint import report
    from generator.lint.rules import RULES

    return report.rule_list(RULES, "json" if fmt == "json" else "text", lang)


def _explain(code: str, lang: str) -> str:
    from generator.lint import report
    from generator.lint.explain import as_text, explain, find_rule

    rule = find_rule(code)
    labels = report.labels_for(lang)
    return as_text(
        explain(rule, lang), labels, report.rule_url(rule.code), report.tip_url(rule.tip)
    )


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


def cmd_lsp(args: argparse.Namespace) -> int:
    from generator.lint.lsp import serve

    return serve(_version(), args.lang)


def _add_lsp(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run the lint as a Language Server over standard input and output, for editors: "
        "diagnostics as you type, fixes and # noqa as code actions, --explain on hover. "
        "The settings of VS Code, Neovim, Helix and Emacs are on the lint page."
    )
    p.add_argument(
        "--lang", choices=["en", "zh"], default="en", help="language of the messages (default: en)"
    )
    p.add_argument(
        "--stdio",
        action="store_true",
        help="accepted for editors that pass it (stdio is the default)",
    )


COMMANDS = {
    "lint": Command(
        "Check Python files against the tips (exit 1 on findings); --fix applies safe fixes.",
        _add_lint,
        cmd_lint,
    ),
    "lsp": Command(
        "Serve the lint to editors: a Language Server over stdio (needs the [lsp] extra).",
        _add_lsp,
        cmd_lsp,
        needs=("lsp",),
    ),
}
