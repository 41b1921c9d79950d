"""What the composed train.py costs over the plainest possible training loop.

Composes the script with no flags, then measures, in one run on one machine, the training
throughput of

* the generated script at its default sizes (conv net, 3x32x32 images, batch 32), and
* a minimal hand-written loop on the same model, data and optimizer (imported from the
  generated script), in the same order: DataLoader, forward, loss, zero_grad, backward,
  step. Nothing else: the floor of what any trainer can do.

Both report every 20 steps; the driver reads each process's CPU time (/proc/<pid>/stat) at
each report, so the figure is samples per CPU-second of the training loop, after a warm-up,
with startup excluded. CPU time rather than wall time, and one thread (OMP_NUM_THREADS=1),
because a shared machine's other load then cannot skew the comparison: it delays a process
but does not make it burn more CPU (two OpenMP threads would, spinning while they wait for
each other). Wall-clock samples/s are recorded as well. Runs alternate (generated, minimal,
minimal, generated, ...). Results go to benchmarks/results/compose-overhead-<device>.json.
This is a benchmark, not a test: run it by hand.

    python benchmarks/compose_overhead.py             # about 4 minutes on 2 CPU cores
    python benchmarks/compose_overhead.py --quick     # a rough figure in about a minute
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.compose import ComposeOptions, compose, read_tips_by_feature  # noqa: E402

#: The floor. Imports the workload from the generated train.py, so both train the same
#: model on the same data with the same optimizer settings.
MINIMAL = r"""
import itertools
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, DistributedSampler

from train import build_dataset, build_model, weight_decay

device, warmup, steps, every, batch = sys.argv[1], *map(int, sys.argv[2:6])
lr = float(sys.argv[6])
torch.manual_seed(0)
data = build_dataset("train", 2048, 32)
model = build_model(32).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
# The generated script's shuffle, so that both train on the same batches in the same order
# and do exactly the same arithmetic.
sampler = DistributedSampler(data, num_replicas=1, rank=0, seed=0)
loader = DataLoader(data, batch_size=batch, sampler=sampler, drop_last=True)


def batches():
    for epoch in itertools.count():
        sampler.set_epoch(epoch)
        yield from loader


it = batches()
start = time.perf_counter()
for i in range(1, warmup + steps + 1):
    x, y = next(it)
    x, y = x.to(device), y.to(device)
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if i % every == 0:  # reports like the generated script's log lines
        loss.item()
        now = time.perf_counter()
        print(f"step {i} | {every * batch / (now - start):.1f} samples/s", flush=True)
        start = now
"""

BATCH = 32  # the generated script's default --batch-size
LR = 3e-3  # and its default --lr
EVERY = 20  # steps per measured interval


class Measurement:
    """One run's report lines, with the process's CPU time and the wall time at each."""

    def __init__(self, argv: list[str], folder: Path, env: dict[str, str]) -> None:
        self.cpu: list[float] = []  # CPU seconds (user + system) at each report
        self.wall: list[float] = []
        proc = subprocess.Popen(argv, cwd=folder, stdout=subprocess.PIPE, text=True, env=env)
        assert proc.stdout is not None
        for line in proc.stdout:
            if "samples/s" in line:
                self.cpu.append(_cpu_seconds(proc.pid))
                self.wall.append(time.perf_counter())
        assert proc.wait() == 0, f"{argv} failed"

    def rates(self, skip: int, samples: int) -> tuple[float, float]:
        """(samples per CPU-second, samples per second) after the first ``skip`` reports."""
        n = len(self.cpu) - 1 - skip
        assert n > 0, "no report after the warm-up"
        cpu = self.cpu[-1] - self.cpu[skip]
        wall = self.wall[-1] - self.wall[skip]
        return n * samples / cpu, n * samples / wall


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def run(kind: str, folder: Path, args: argparse.Namespace, env: dict[str, str]) -> tuple:
    """Run one loop; return its (samples per CPU-second, samples per second)."""
    if kind == "generated":
        argv = [sys.executable, "train.py", "--device", args.device, "--out", "out"]
        argv += ["--max-steps", str(args.warmup + args.steps), "--log-every", str(EVERY)]
    else:
        argv = [sys.executable, "minimal.py", args.device]
        argv += [str(v) for v in (args.warmup, args.steps, EVERY, BATCH, LR)]
    measurement = Measurement(argv, folder, env)
    return measurement.rates(args.warmup // EVERY - 1, EVERY * BATCH)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--pairs", type=int, default=8, help="generated/minimal run pairs")
    parser.add_argument("--steps", type=int, default=200, help="measured steps per run")
    parser.add_argument("--warmup", type=int, default=40, help="steps not measured")
    parser.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of the runs")
    parser.add_argument("--quick", action="store_true", help="1 pair of 100 steps")
    parser.add_argument("-o", "--output", type=Path, help="results file (default: results/...)")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.steps = 1, 100
    args.steps = max(args.steps - args.steps % EVERY, EVERY)
    args.warmup = max(args.warmup - args.warmup % EVERY, EVERY)

    import torch

    folder = Path(tempfile.mkdtemp(prefix="compose-overhead-"))
    script = compose(ComposeOptions(), read_tips_by_feature())
    (folder / "train.py").write_text(script, encoding="utf-8")
    (folder / "minimal.py").write_text(MINIMAL, encoding="utf-8")

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), PYTHONUNBUFFERED="1")
    cpu: dict[str, list[float]] = {"generated": [], "minimal": []}
    wall: dict[str, list[float]] = {"generated": [], "minimal": []}
    try:
        for i in range(args.pairs):
            for kind in ["generated", "minimal"] if i % 2 == 0 else ["minimal", "generated"]:
                per_cpu_second, per_second = run(kind, folder, args, env)
                cpu[kind].append(per_cpu_second)
                wall[kind].append(per_second)
            print(
                f"pair {i + 1}/{args.pairs}: generated {cpu['generated'][-1]:.1f}, minimal "
                f"{cpu['minimal'][-1]:.1f} samples per CPU-second",
                flush=True,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    generated = statistics.median(cpu["generated"])
    minimal = statistics.median(cpu["minimal"])
    ratio = generated / minimal
    pair_ratios = [g / m for g, m in zip(cpu["generated"], cpu["minimal"], strict=True)]
    result = {
        "date": datetime.date.today().isoformat(),
        "device": args.device,
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "threads": args.threads,
        "gpu": torch.cuda.get_device_name() if args.device == "cuda" else None,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "workload": "the default workload of train.py: conv net of width 32 on 2048 "
        f"3x32x32 images, batch {BATCH}, AdamW; {args.pairs} pair(s) of runs, each "
        f"measured over {args.steps} steps after {args.warmup}",
        "measure": "samples per CPU-second of the training loop (median over runs)",
        "generated_samples_per_s": round(generated, 1),
        "minimal_samples_per_s": round(minimal, 1),
        "ratio": round(ratio, 4),
        "overhead_percent": round((1 - ratio) * 100, 2),
        "target_overhead_percent": 2.0,
        "median_pair_ratio": round(statistics.median(pair_ratios), 4),
        "pair_ratio_range": [round(min(pair_ratios), 4), round(max(pair_ratios), 4)],
        "wall_generated_samples_per_s": round(statistics.median(wall["generated"]), 1),
        "wall_minimal_samples_per_s": round(statistics.median(wall["minimal"]), 1),
        "runs": {
            "samples_per_cpu_second": {k: [round(v, 1) for v in vs] for k, vs in cpu.items()},
            "samples_per_second": {k: [round(v, 1) for v in vs] for k, vs in wall.items()},
        },
        "command": " ".join(["python benchmarks/compose_overhead.py", *sys.argv[1:]]),
    }
    output = args.output or ROOT / "benchmarks" / "results" / f"compose-overhead-{args.device}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(
        f"generated {result['generated_samples_per_s']}, minimal loop "
        f"{result['minimal_samples_per_s']} samples per CPU-second: ratio "
        f"{result['ratio']}, overhead {result['overhead_percent']}%; wrote {output}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
