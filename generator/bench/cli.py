"""The ``bench`` subcommand: measure the speed and memory tips, write the results file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.command import CHECKOUT, Command, positive_int, print_line, relative
from generator.errors import NotFound, UserError


def cmd_bench(args: argparse.Namespace) -> int:
    import time

    from generator.bench import results
    from generator.bench import runner as bench
    from generator.records.load import get_tip, load_tips

    start = time.perf_counter()
    # Everything that can fail without measuring fails first, in one line: where the
    # results go, the device, the tips, the previous file and whether it can be merged.
    out = Path(args.out) if args.out else results.results_path(args.device)
    results.check_writable(out)
    bench.check_device(args.device)
    tips = [get_tip(i) for i in args.ids] if args.ids else load_tips()
    measured, skipped = bench.benchmarkable(tips, args.device)
    for tip in tips:
        if tip.bench is None and args.ids:
            raise UserError(f"{tip.id} has no bench section: nothing to measure")
    for tip in skipped:
        assert tip.bench is not None and tip.bench.not_measurable is not None
        reason = tip.bench.not_measurable.reason.en.splitlines()[0]
        print_line(f"skip {tip.id}: not measurable on {args.device}: {reason}")
    if not measured:
        raise NotFound(f"no tip to measure on {args.device}")
    old = results.read_results(out) if out.is_file() else None
    threads = args.threads or 1
    plan = bench.Plan.make(args.quick, args.replicates)
    env = bench.environment(args.device, threads)
    replace = not args.ids
    if not replace:
        results.check_mergeable(old, args.device, env, bench.settings(plan))
    writer = results.ResultsWriter(out, old, replace=replace)
    try:
        run = bench.run(
            measured,
            device=args.device,
            quick=args.quick,
            num_threads=threads,
            replicates=args.replicates,
            progress=not args.no_progress,
            env=env,
            save=writer,
        )
    except KeyboardInterrupt:
        if writer.measured:
            n = writer.measured
            sys.stderr.write(f"interrupted: {relative(out)} keeps the {n} tip(s) measured so far\n")
        raise
    writer.finish(run)
    failed = 0
    width = max(len(f"{t.id} (compute-bound)") for t in measured)
    for tip_id in run.results:
        for regime, res in run.regimes(tip_id):
            name = tip_id if regime == "default" else f"{tip_id} ({regime})"
            if res.error:
                failed += 1
                print_line(f"{name:<{width}}  FAILED: {res.error}")
                continue
            assert res.time is not None
            t = res.time
            line = (
                f"{name:<{width}}  {t.before.median_s * 1e3:9.3f} ms -> "
                f"{t.after.median_s * 1e3:9.3f} ms  x{t.ratio:.2f} ({t.low:.2f}-{t.high:.2f})"
                f"  {t.verdict}"
            )
            if res.memory is not None:
                m = res.memory
                line += f"  | {m.before_bytes} -> {m.after_bytes} bytes {m.verdict}"
            print_line(line)
    elapsed = time.perf_counter() - start
    print_line(f"\nwrote {relative(out)}: {len(run.results)} tip(s) measured in {elapsed:.0f} s.")
    return 1 if failed else 0


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
