"""Timing training runs from outside: what compose_overhead.py and compose_compare.py share.

Each run is a process that prints a line containing "samples/s" every `every` steps, right
after reading its loss (on CUDA that waits for the GPU, so the line marks the end of the
work). :class:`Measurement` notes, as each line arrives, the wall time and the process's
CPU time (/proc/<pid>/stat). The rate of a run is measured between its first report after
the warm-up and its last, so start-up, compilation and the first steps are left out:

* on CUDA, samples per second of wall time;
* on a CPU, samples per CPU-second, with one thread: a shared machine's other load delays
  a process far more than it makes it burn more CPU (OpenMP threads would spin while they
  wait for each other), so the comparison mostly holds on a busy machine. Mostly: a core
  shared with another busy process runs slower, so compare medians over several runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import time
from pathlib import Path

EVERY = 20  # steps per report, and so per measured interval

MEASURES = {
    "cpu": "samples per CPU-second of the training loop (median over runs)",
    "cuda": "samples per second of wall time, each interval ending in a sync (median over runs)",
}


class Measurement:
    """One run's report lines (those with `marker`), with the process's CPU time and the
    wall time at each."""

    def __init__(
        self, argv: list[str], folder: Path, env: dict[str, str], marker: str = "samples/s"
    ) -> None:
        self.cpu: list[float] = []  # CPU seconds (user + system) at each report
        self.wall: list[float] = []
        self.lines: list[str] = []  # every line the run printed to stdout
        proc = subprocess.Popen(argv, cwd=folder, stdout=subprocess.PIPE, text=True, env=env)
        assert proc.stdout is not None
        for line in proc.stdout:
            if marker in line:
                self.cpu.append(_cpu_seconds(proc.pid))
                self.wall.append(time.perf_counter())
            self.lines.append(line.rstrip("\n"))
        if proc.wait() != 0:
            tail = "\n".join(self.lines[-20:])
            raise RuntimeError(f"{' '.join(argv)} failed (exit {proc.returncode}):\n{tail}")

    def rate(self, device: str, skip: int, samples: int) -> float:
        """Samples per second (CUDA: wall time; CPU: CPU time) after ``skip`` reports,
        each of ``samples`` samples."""
        n = len(self.wall) - 1 - skip
        assert n > 0, "no report after the warm-up"
        times = self.wall if device == "cuda" else self.cpu
        return n * samples / (times[-1] - times[skip])

    def wall_rate(self, skip: int, samples: int) -> float:
        """Samples per second of wall time after ``skip`` reports."""
        n = len(self.wall) - 1 - skip
        return n * samples / (self.wall[-1] - self.wall[skip])


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def cpu_model() -> str:
    """The CPU's model name (Linux), or what the platform module knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment(device: str, threads: int | None) -> dict[str, str]:
    """The runs' environment: unbuffered output; OMP_NUM_THREADS when ``threads`` is given."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def add_run_arguments(parser: argparse.ArgumentParser, warmup: int) -> None:
    """The options both benchmarks take: device, steps, warm-up, threads and output file."""
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--steps", type=int, default=200, help="measured steps per run")
    parser.add_argument("--warmup", type=int, default=warmup, help="steps not measured")
    parser.add_argument("--threads", type=int, help="OMP_NUM_THREADS (default: 1 on a CPU)")
    parser.add_argument("-o", "--output", type=Path, help="results file (default: results/...)")


def settle_run_arguments(
    parser: argparse.ArgumentParser, args: argparse.Namespace, default_output: Path
) -> Path:
    """Round steps and warm-up to whole intervals, default to one CPU thread, pick the preset
    and learning rate every loop shares; fail now, not after the runs, on a missing CUDA
    device or an output folder that cannot be made. Returns the output file."""
    args.steps = max(args.steps - args.steps % EVERY, EVERY)
    args.warmup = max(args.warmup - args.warmup % EVERY, 2 * EVERY)
    if args.threads is None and args.device == "cpu":
        args.threads = 1
    args.preset = "gpu" if args.device == "cuda" else "cpu"
    args.lr = 1e-3  # the same for every loop compared

    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device here")
    output = args.output or default_output
    output.parent.mkdir(parents=True, exist_ok=True)
    return output
