"""Running ``python -m generator doctor`` on a script as a user would: a fresh process,
PYTHONUNBUFFERED unset (as in CI and SLURM logs), one thread (the planted problems are about
the loop, not the machine's other load)."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
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
    """``python -m generator doctor ARGS`` in ``cwd``."""
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "doctor", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env(),
        timeout=timeout,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def planted(script: str, kind: str) -> int:
    """The line of ``scripts/<script>`` marked ``planted: <kind>``."""
    lines = (SCRIPTS / script).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if f"planted: {kind}" in line)


def no_traceback(run: Run) -> None:
    assert "Traceback" not in run.stderr + run.stdout, run.stderr


@functools.cache
def report_of(script: str, *args: str) -> Run:
    """``doctor --format json`` of ``scripts/<script>`` with the CI sizes, once per session
    (tests that read the same run share it)."""
    return doctor(*FAST, "--format", "json", *args, script)
