"""Run a tip's snippet and then its checks in one namespace, in a fresh Python process.

The test suite and ``python -m generator run`` both go through `run_variant`, so
what a contributor runs by hand is exactly what CI runs. A plain snippet runs in a fork of a
process that imported torch once, with deprecation and future warnings as errors
(`generator.records.process`); a snippet with a ``launch`` (see
`generator.records.schema.Launch`) is the script every rank of a distributed job runs:
`generator.records.launch` starts it under torchrun.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.records.launch import run_launch
from generator.records.process import DEFAULT_TIMEOUT_S, RunResult, run_python

if TYPE_CHECKING:
    from generator.records.schema import Launch


def run_variant(
    code: str,
    checks: str | None,
    filename: str,
    device: str = "cpu",
    timeout: float = DEFAULT_TIMEOUT_S,
    launch: Launch | None = None,
    probe: str | None = None,
) -> RunResult:
    """Run ``code`` then ``checks`` in a fresh interpreter; ``filename`` names it in tracebacks.

    ``probe`` (check-only) runs just before ``code`` in the same namespace. With ``launch``,
    ``code`` is the script of every rank of a torchrun job (`generator.records.launch`).
    """
    if launch is not None:
        return run_launch(code, checks, filename, device, timeout, launch, probe)
    return run_python(code, checks, filename, device, timeout, probe=probe)
