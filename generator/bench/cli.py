"""The ``bench`` subcommand: measure the speed and memory tips, write the results file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.command import CHECKOUT, Command, positive_int, print_line


def cmd_bench(args: argparse.Namespace) -> int:
    from generator.bench import api, texts

    try:
        done = api.measure(
            args.ids,
            device=args.device,
            quick=args.quick,
            replicates=args.replicates,
            threads=args.threads,
            out=Path(args.out) if args.out else None,
            progress=not args.no_progress,
            on_skip=lambda tip: print_line(texts.skip_line(tip, args.device)),
        )
    except api.Interrupted as err:
        if err.kept:
            sys.stderr.write(texts.interrupted_line(err.out, err.kept) + "\n")
        raise
    for line in texts.result_lines(done.run):
        print_line(line)
    print_line(texts.wrote_line(done.out, len(done.run.results), done.elapsed_s))
    return 1 if done.failed else 0


def _add_bench(p: argparse.ArgumentParser) -> None:
    p.add_argument("ids", nargs="*", metavar="ID", help="only these tips (default: all)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="default: cpu")
    p.add_argument("--quick", action="store_true", help="short timing: all tips in minutes")
    p.add_argument(
        "--out",
        metavar="FILE",
        help="results file, checked before measuring and written after every tip "
        "(default: benchmarks/results/DEVICE.json)",
    )
    p.add_argument("--threads", type=positive_int, help="torch threads while timing (default: 1)")
    p.add_argument("--replicates", type=positive_int, help="replicates (default: 5 quick, 7)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


COMMANDS = {
    "bench": Command(
        "Measure before vs after of speed and memory tips (writes JSON).",
        _add_bench,
        cmd_bench,
        needs=(CHECKOUT, "bench"),
    ),
}
