"""The ``compose`` subcommand: write a ``train.py`` from the chosen flags."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.command import Command
from generator.compose.flags import add_arguments


def cmd_compose(args: argparse.Namespace) -> int:
    from generator.compose.script import (
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


COMMANDS = {
    "compose": Command(
        "Write a train.py that applies the chosen tips, each block citing its tip.",
        add_arguments,
        cmd_compose,
    ),
}
