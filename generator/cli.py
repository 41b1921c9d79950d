"""Command-line interface: assemble the capabilities' subcommands, run one, map known errors
to exit codes.

Exit codes: 0 success, 1 invalid records / stale files / failed run / nothing found,
2 bad usage or input or a missing extra, 130 interrupted. User errors print one line, never a
traceback. Commands import torch only when they need it; one that needs an extra the install
lacks (torch, MkDocs), or a checkout, says so in one line before it starts. Each capability's
``cli`` module defines its own commands (`generator.command.Command`); ``validate`` lives
here, where the records and the lint rules they cite are both known.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from generator.command import Command, extra_of, install_hint, print_line, unmet
from generator.errors import InvalidRecords, UserError

#: The order of the commands in ``--help``.
ORDER = (
    "validate",
    "list",
    "show",
    "search",
    "new",
    "snippets",
    "check",
    "build",
    "serve",
    "bench",
    "compose",
    "lint",
    "run",
)


def cmd_validate(args: argparse.Namespace) -> int:
    from generator.lint.tips import rule_code_problems
    from generator.records.load import validate

    targets = [Path(p) for p in args.paths] or None
    tips, problems = validate(targets, cross_checks=[rule_code_problems])
    if problems:
        raise InvalidRecords(problems)
    print_line(f"{len(tips)} record(s) valid.")
    return 0


def _add_validate(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: tips/)")


def commands() -> dict[str, Command]:
    """Every subcommand, by name, in `ORDER`."""
    from generator.bench import cli as bench
    from generator.compose import cli as compose
    from generator.lint import cli as lint
    from generator.records import cli as records
    from generator.site import cli as site

    found = {
        "validate": Command(
            "Check tip records against the schema and each other.", _add_validate, cmd_validate
        ),
        **records.COMMANDS,
        **site.COMMANDS,
        **bench.COMMANDS,
        **compose.COMMANDS,
        **lint.COMMANDS,
    }
    return {name: found[name] for name in ORDER}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m generator``."""
    parser = argparse.ArgumentParser(
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
        sys.stderr.write(f"{err}\n")
        return err.exit_code
    except UserError as err:
        sys.stderr.write(f"error: {err}\n")
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
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
