"""One subcommand of ``python -m generator``: what each capability's ``cli`` module offers
(its ``COMMANDS``) and `generator.cli` assembles, in the order of its ``CAPABILITIES``; the
argparse types and the output helpers the commands share."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NamedTuple

Handler = Callable[[argparse.Namespace], int]


class Command(NamedTuple):
    """A subcommand: its one-line help, how it adds its arguments, what runs it, and what it
    needs beyond the base install (`EXTRAS` names, and `CHECKOUT` for the commands that read or
    write the repository's other files), checked by `unmet` before it runs."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    handler: Handler
    needs: tuple[str, ...] = ()


#: A need: the commands that read or write files of the repository beside tips/ (snippets/,
#: docs/, benchmarks/), which an installed wheel does not have.
CHECKOUT = "checkout"

#: The package's extras (pyproject.toml), each with the modules a command of it imports.
EXTRAS: dict[str, tuple[str, ...]] = {
    "run": ("torch", "numpy"),
    "site": (
        "mkdocs",
        "material",
        "mkdocs_static_i18n",
        "mkdocstrings",
        "mkdocstrings_handlers.python",
        "pagefind",
    ),
    "bench": ("torch", "tqdm"),
    "lsp": ("pygls", "lsprotocol"),
}


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def install_hint(extra: str) -> str:
    """How to add ``extra``: to the checkout's editable install, or to the installed package."""
    from generator import paths

    return (
        f"pip install -e '.[{extra}]'" if paths.CHECKOUT else f"pip install 'pytorch-tips[{extra}]'"
    )


def extra_of(module: str) -> str | None:
    """The extra that provides the top-level ``module``, if one does."""
    top = module.split(".")[0]
    return next((e for e, mods in EXTRAS.items() if top in {m.split(".")[0] for m in mods}), None)


def unmet(name: str, needs: tuple[str, ...]) -> str | None:
    """Why the command ``name`` cannot run here, in one line; None when it can."""
    import importlib.util

    from generator import paths

    for need in needs:
        if need == CHECKOUT:
            if not paths.CHECKOUT:
                return (
                    f"pytorch-tips {name} works in a checkout of the repository, not in an "
                    "installed package: clone the repository and run `pip install -e .` there"
                )
            continue
        for module in EXTRAS[need]:
            try:
                found = importlib.util.find_spec(module) is not None
            except ModuleNotFoundError:  # a dotted name whose parent is missing
                found = False
            if not found:
                return (
                    f"pytorch-tips {name} needs the [{need}] extra ({module} is not installed): "
                    f"{install_hint(need)}"
                )
    return None


def print_line(text: str = "") -> None:
    """Write one line to standard output (the commands' results go there, messages to stderr)."""
    import sys

    sys.stdout.write(text + "\n")


def relative(path: object) -> str:
    """``path`` relative to the repository root where it lies inside it, else as given: how
    every message names a file. A relative ``path`` is taken from the working folder; symbolic
    links are not followed, so a file is named as the user reached it."""
    import os
    from pathlib import Path

    from generator import paths

    absolute = Path(os.path.abspath(str(path)))
    if absolute.is_relative_to(paths.ROOT):
        return str(absolute.relative_to(paths.ROOT))
    return str(path)
