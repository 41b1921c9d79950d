"""The ``compose`` subcommand: write a ``train.py`` from the chosen flags."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.command import Command
from generator.compose.flags import add_arguments


def cmd_compose(args: argparse.Namespace) -> int:
    from generator.compose.output import output_path, write_script, write_stdout
    from generator.compose.script import compose, options_from_args, read_tips_by_feature

    options = options_from_args(args)  # contradictions fail here, before anything is written
    target = output_path(args.output, args.force)  # and a path that cannot be written
    name = Path(args.output).name if target else "train.py"
    text = compose(options, read_tips_by_feature(), script_name=name)
    if target is None:
        write_stdout(text)
        return 0
    write_script(text, target, args.output)
    sys.stderr.write(f"wrote {args.output}\n")
    return 0


COMMANDS = {
    "compose": Command(
        "Write a train.py that applies the chosen tips, each block citing its tip.",
        add_arguments,
        cmd_compose,
    ),
}
