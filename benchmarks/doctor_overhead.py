"""What ``pytorch-tips doctor`` costs over running the script plainly, on the CPU.

Composes the GPT train.py with default flags, then runs, alternately, in fresh processes:

* the plain script for the steps the doctor runs with its defaults: 3 warm-up, 10 timed, 1
  as the profiler starts and 3 profiled, 17 optimizer steps (``--max-steps 17``), and
* ``python -m generator doctor train.py``, which stops the script after those 17 steps and
  writes its report (JSON, to a file), the lint of the script included.

Each is timed as a whole, from the process's start to its end (import, data, model, the
steps, the report): what a user waits for. The figure is the ratio of the medians; the
issue's target is at most 2. One CPU thread; results to
benchmarks/results/doctor-overhead-cpu.json. This is a benchmark, not a test.

    python benchmarks/doctor_overhead.py             # 3 pairs of runs, about 2 minutes
    python benchmarks/doctor_overhead.py --pairs 5
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from compose_runs import cpu_model  # noqa: E402

from generator.compose.script import ComposeOptions, compose, read_tips_by_feature  # noqa: E402

OUTPUT = ROOT / "benchmarks" / "results" / "doctor-overhead-cpu.json"
WARMUP, STEPS, PROFILE = 3, 10, 3
TOTAL = WARMUP + STEPS + 1 + PROFILE
TARGET = 2.0


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return seconds


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3, help="pairs of runs (default: 3)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update(PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    runs: dict[str, list[float]] = {"plain": [], "doctor": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        script = folder / "train.py"
        script.write_text(compose(ComposeOptions(model="gpt"), read_tips_by_feature()), "utf-8")
        py = sys.executable
        plain = [py, "train.py", "--max-steps", str(TOTAL), "--ckpt-every", "0", "--out", "a"]
        doctor = [py, "-m", "generator", "doctor", "--quiet", "--format", "json"]
        doctor += ["-o", "report.json", "train.py", "--ckpt-every", "0", "--out", "b"]
        for i in range(args.pairs):
            order = ("plain", "doctor") if i % 2 == 0 else ("doctor", "plain")
            for name in order:
                runs[name].append(
                    round(timed(plain if name == "plain" else doctor, folder, env), 3)
                )
                print(f"pair {i + 1}/{args.pairs}: {name} {runs[name][-1]:.2f} s", flush=True)
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    plain_s, doctor_s = statistics.median(runs["plain"]), statistics.median(runs["doctor"])
    data = {
        "date": datetime.date.today().isoformat(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "threads": 1,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "workload": "the composed GPT train.py, default flags, cpu preset: "
        f"{TOTAL} optimizer steps ({WARMUP} warm-up, {STEPS} timed, 1 as the profiler "
        f"starts, {PROFILE} profiled)",
        "measure": "wall time of the whole process, start to end (median over runs)",
        "steps": TOTAL,
        "plain_s": plain_s,
        "doctor_s": doctor_s,
        "ratio": round(doctor_s / plain_s, 3),
        "target_ratio": TARGET,
        "doctor_step_time_s": report["step_time_s"],
        "runs": runs,
        "command": "python benchmarks/doctor_overhead.py"
        + ("" if args.pairs == 3 else f" --pairs {args.pairs}"),
    }
    OUTPUT.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"plain {plain_s:.2f} s, doctor {doctor_s:.2f} s: {data['ratio']:.2f}x; wrote {OUTPUT}")


if __name__ == "__main__":
    main()
