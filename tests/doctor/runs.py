"""Running the doctor on a script, two ways.

`doctor` runs ``python -m generator doctor`` as a user would: a fresh process,
PYTHONUNBUFFERED unset (as in CI and SLURM logs), one thread (the planted problems are about
the loop, not the machine's other load). The tests of what a process shows (its exit
status, its standard error, no traceback, torchrun) use it.

`in_process` runs the same command line in this process (`generator.cli.main`, as
``python -m generator`` calls it, whose return value is the exit status): the detections
are the same, without a new process's 3 s of importing torch and TorchDynamo (which the
first ``optimizer.step()`` imports) for every script. What the scripts change in the process
(the working folder, torch's threads and random state, signal handlers, warning filters) is
restored after each run; the doctor leaves out TorchDynamo's records of earlier runs.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import signal
import subprocess
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator import paths

SCRIPTS = Path(__file__).parent / "scripts"
#: Small enough for CI: one warm-up step, three timed, the profiler's settling step, three
#: profiled (a leak needs survivors from two steps).
FAST = ("--warmup", "1", "--steps", "3", "--profile-steps", "3")


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    @property
    def report(self) -> dict[str, Any]:
        return json.loads(self.stdout)

    def findings(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.report["findings"] if f["kind"] == kind]


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    out.update(PYTHONPATH=str(paths.ROOT), OMP_NUM_THREADS="1")
    return out


def doctor(*args: str, cwd: Path = SCRIPTS, timeout: int = 240) -> Run:
    """``python -m generator doctor ARGS`` in ``cwd``, in a new process."""
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "doctor", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env(),
        timeout=timeout,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


@contextlib.contextmanager
def _restored(cwd: Path) -> Iterator[None]:
    """Run in ``cwd`` on one thread; afterwards, what a script may have changed is back."""
    import torch

    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    threads, rng, before = torch.get_num_threads(), torch.get_rng_state(), Path.cwd()
    os.chdir(cwd)
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings():
            yield
    finally:
        os.chdir(before)
        torch.set_num_threads(threads)
        torch.set_rng_state(rng)
        for number, handler in handlers.items():
            signal.signal(number, handler)


def in_process(*args: str, cwd: Path = SCRIPTS) -> Run:
    """``python -m generator doctor ARGS`` in ``cwd``, in this process: the exit status
    is `main`'s return value; an exception out of it (a traceback) fails the test."""
    from generator.cli import main

    out, err = io.StringIO(), io.StringIO()
    with _restored(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["doctor", *args])
    return Run(code, out.getvalue(), err.getvalue())


def planted(script: str, kind: str) -> int:
    """The line of ``scripts/<script>`` marked ``planted: <kind>``."""
    lines = (SCRIPTS / script).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if f"planted: {kind}" in line)


def no_traceback(run: Run) -> None:
    assert "Traceback" not in run.stderr + run.stdout, run.stderr


@functools.cache
def report_of(script: str, *args: str) -> Run:
    """``doctor --format json`` of ``scripts/<script>`` with the CI sizes, in this process,
    once per session (tests that read the same run share it)."""
    return in_process(*FAST, "--format", "json", *args, script)
