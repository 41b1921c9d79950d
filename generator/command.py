"""One subcommand of ``python -m generator``: what each capability's ``cli`` module offers,
and `generator.cli` assembles in a fixed order."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NamedTuple

Handler = Callable[[argparse.Namespace], int]


class Command(NamedTuple):
    """A subcommand: its one-line help, how it adds its arguments, and what runs it."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    handler: Handler


def print_line(text: str = "") -> None:
    """Write one line to standard output (the commands' results go there, messages to stderr)."""
    import sys

    sys.stdout.write(text + "\n")


def relative(path: object) -> str:
    """``path`` relative to the repository root where it lies inside it, else as given."""
    from pathlib import Path

    from generator import paths

    try:
        return str(Path(str(path)).relative_to(paths.ROOT))
    except ValueError:
        return str(path)
