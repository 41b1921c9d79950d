"""What the composed train.py costs over the plainest possible training loop.

Composes the script with no flags, then measures, in one run on one machine, the training
throughput of

* the generated script at the device's preset (on a CPU: conv net of width 32, 3x32x32
  images, batch 32; on CUDA: width 256, 64x64, batch 256), and
* a minimal hand-written loop on the same model, data and optimizer (imported from the
  generated script), in the same order: one indexing operation a batch, forward, loss,
  zero_grad, backward, step. Nothing else: the floor of what any trainer can do.

Both report every 20 steps, and each report is timed as it arrives (compose_runs.py), after
a warm-up, with start-up excluded: samples per CPU-second on a CPU, with one thread, so that
a shared machine's other load cannot skew the comparison; samples per second of wall time
on CUDA, where the GPU does the work and each report follows a sync. Runs alternate
(generated, minimal, minimal, generated, ...). Results go to
benchmarks/results/compose-overhead-<device>.json. This is a benchmark, not a test: run it
by hand. benchmarks/compose_compare.py measures the flags and Lightning as well.

    python benchmarks/compose_overhead.py             # about 4 minutes on 2 CPU cores
    python benchmarks/compose_overhead.py --quick     # a rough figure in about a minute
    python benchmarks/compose_overhead.py --device cuda
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import runpy
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compose_runs import (  # noqa: E402
    EVERY,
    MEASURES,
    Measurement,
    add_run_arguments,
    cpu_model,
    environment,
    settle_run_arguments,
)

from generator.compose.script import ComposeOptions, compose, read_tips_by_feature  # noqa: E402

#: The floor. Imports the workload from the generated train.py, so both train the same
#: model on the same data with the same optimizer settings.
MINIMAL = r"""
import itertools
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

from train import build_dataset, build_model, presets, weight_decay

device, preset, steps, every = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:5])
lr = float(sys.argv[5])
size = presets[preset]
torch.manual_seed(0)
data = build_dataset("train", size["samples"], size["image_size"])
model = build_model(size["width"]).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
# The generated script's shuffle and batched reads, so that both train on the same batches
# in the same order and do exactly the same arithmetic.
sampler = DistributedSampler(data, num_replicas=1, rank=0, seed=0)
batches = BatchSampler(sampler, size["batch_size"], drop_last=True)
loader = DataLoader(data, sampler=batches, batch_size=None)


def epochs():
    for epoch in itertools.count():
        sampler.set_epoch(epoch)
        yield from loader


it = epochs()
for i in range(1, steps + 1):
    x, y = next(it)
    x, y = x.to(device), y.to(device)
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if i % every == 0:  # reports like the generated script's log lines
        loss.item()
        print(f"step {i} | samples/s", flush=True)
"""


def run(kind: str, folder: Path, args: argparse.Namespace, env: dict[str, str]) -> tuple:
    """Run one loop; return its (samples/s by the device's measure, wall samples/s)."""
    total = args.warmup + args.steps
    if kind == "generated":
        argv = [sys.executable, "train.py", "--device", args.device, "--out", "out"]
        argv += ["--preset", args.preset, "--lr", str(args.lr), "--ckpt-every", "0"]
        argv += ["--max-steps", str(total), "--log-every", str(EVERY)]
    else:
        argv = [sys.executable, "minimal.py", args.device, args.preset]
        argv += [str(v) for v in (total, EVERY, args.lr)]
    measurement = Measurement(argv, folder, env)
    skip, samples = args.warmup // EVERY - 1, EVERY * args.batch
    return measurement.rate(args.device, skip, samples), measurement.wall_rate(skip, samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, warmup=40)
    parser.add_argument("--pairs", type=int, default=8, help="generated/minimal run pairs")
    parser.add_argument("--quick", action="store_true", help="1 pair of 100 steps")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.steps = 1, 100
    default = ROOT / "benchmarks" / "results" / f"compose-overhead-{args.device}.json"
    output = settle_run_arguments(parser, args, default)
    import torch  # after the argument checks: --help stays fast

    folder = Path(tempfile.mkdtemp(prefix="compose-overhead-"))
    script = compose(ComposeOptions(), read_tips_by_feature())
    (folder / "train.py").write_text(script, encoding="utf-8")
    (folder / "minimal.py").write_text(MINIMAL, encoding="utf-8")
    size = runpy.run_path(str(folder / "train.py"), run_name="train")["presets"][args.preset]
    args.batch = size["batch_size"]

    env = environment(args.device, args.threads)
    measured: dict[str, list[float]] = {"generated": [], "minimal": []}
    wall: dict[str, list[float]] = {"generated": [], "minimal": []}
    unit = "samples/s" if args.device == "cuda" else "samples per CPU-second"
    try:
        for i in range(args.pairs):
            for kind in ["generated", "minimal"] if i % 2 == 0 else ["minimal", "generated"]:
                rate, per_second = run(kind, folder, args, env)
                measured[kind].append(rate)
                wall[kind].append(per_second)
            print(
                f"pair {i + 1}/{args.pairs}: generated {measured['generated'][-1]:.1f}, "
                f"minimal {measured['minimal'][-1]:.1f} {unit}",
                flush=True,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    generated = statistics.median(measured["generated"])
    minimal = statistics.median(measured["minimal"])
    ratio = generated / minimal
    pairs = [g / m for g, m in zip(measured["generated"], measured["minimal"], strict=True)]
    result = {
        "date": datetime.date.today().isoformat(),
        "device": args.device,
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "threads": args.threads,
        "gpu": torch.cuda.get_device_name() if args.device == "cuda" else None,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "workload": f"train.py's {args.preset} preset: conv net of width {size['width']} on "
        f"{size['samples']} 3x{size['image_size']}x{size['image_size']} images, batch "
        f"{size['batch_size']}, AdamW (lr {args.lr}); {args.pairs} pair(s) of runs, each "
        f"measured over {args.steps} steps after {args.warmup}",
        "measure": MEASURES[args.device],
        "generated_samples_per_s": round(generated, 1),
        "minimal_samples_per_s": round(minimal, 1),
        "ratio": round(ratio, 4),
        "overhead_percent": round((1 - ratio) * 100, 2),
        "target_overhead_percent": 2.0,
        "median_pair_ratio": round(statistics.median(pairs), 4),
        "pair_ratio_range": [round(min(pairs), 4), round(max(pairs), 4)],
        "wall_generated_samples_per_s": round(statistics.median(wall["generated"]), 1),
        "wall_minimal_samples_per_s": round(statistics.median(wall["minimal"]), 1),
        "runs": {
            "measured": {k: [round(v, 1) for v in vs] for k, vs in measured.items()},
            "samples_per_second": {k: [round(v, 1) for v in vs] for k, vs in wall.items()},
        },
        "command": " ".join(["python benchmarks/compose_overhead.py", *sys.argv[1:]]),
    }
    output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(
        f"generated {result['generated_samples_per_s']}, minimal loop "
        f"{result['minimal_samples_per_s']} {unit}: ratio {result['ratio']}, "
        f"overhead {result['overhead_percent']}%; wrote {output}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
