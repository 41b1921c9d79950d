"""Measure the speed and memory tips and write the results file: `measure`, what
``python -m generator bench`` runs (its handler only prints, with `generator.bench.texts`).

Everything that can fail without measuring fails first, in one line (`UserError`): where the
results go, the device, the tips, the previous file and whether it can be merged. Torch is
imported only once the measuring starts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.bench import results, runner
from generator.bench.machine import check_device, environment
from generator.bench.results import ResultsFile
from generator.errors import NotFound, UserError
from generator.records.schema import Tip


class Interrupted(KeyboardInterrupt):
    """The run was interrupted: `out` keeps the `kept` tips measured before."""

    def __init__(self, out: Path, kept: int) -> None:
        super().__init__()
        self.out, self.kept = out, kept


@dataclass(frozen=True)
class Measured:
    """A finished run: its results (`ResultsFile`, this run's tips only), the file they
    were merged into, and how long it took."""

    run: ResultsFile
    out: Path
    tips: list[Tip]
    elapsed_s: float

    @property
    def failed(self) -> int:
        """How many of the run's results (tip and regime) are errors."""
        return sum(1 for tip in self.run.results for _, r in self.run.regimes(tip) if r.error)


def _tips(ids: Sequence[str]) -> list[Tip]:
    """The tips ``ids`` name (each needs a bench section), or every tip."""
    from generator.records.load import get_tip, load_tips

    if not ids:
        return load_tips()
    tips = [get_tip(i) for i in ids]
    for tip in tips:
        if tip.bench is None:
            raise UserError(f"{tip.id} has no bench section: nothing to measure")
    return tips


def _measurable(
    ids: Sequence[str], device: str, out: Path, on_skip: Callable[[Tip], None]
) -> list[Tip]:
    """The checks made before measuring: ``out`` can be written, ``device`` is here, the tips
    exist and have a bench section. Returns the tips measurable on ``device`` (``on_skip``
    is told the others)."""
    results.check_writable(out)
    check_device(device)
    measured, skipped = runner.benchmarkable(_tips(ids), device)
    for tip in skipped:
        on_skip(tip)
    if not measured:
        raise NotFound(f"no tip to measure on {device}")
    return measured


def measure(
    ids: Sequence[str] = (),
    *,
    device: str = "cpu",
    quick: bool = False,
    replicates: int | None = None,
    threads: int | None = None,
    out: Path | None = None,
    progress: bool = True,
    on_skip: Callable[[Tip], None] = lambda tip: None,
) -> Measured:
    """Measure the tips ``ids`` (default: every tip with a bench section) on ``device`` and
    merge the results into ``out`` (default: ``benchmarks/results/DEVICE.json``), writing it
    after every tip. A run over every tip replaces the file; one over some tips is merged
    into it, which needs the same machine and settings.

    Args:
        on_skip: called, before measuring, with each tip not measurable on ``device``.

    Raises:
        UserError: ``out`` cannot be written or merged into, the device is missing, a tip
            has no bench section.
        NotFound: an unknown id, or no tip to measure on ``device``.
        Interrupted: interrupted while measuring (what was measured is written).
    """
    start = time.perf_counter()
    out = out or results.results_path(device)
    measured = _measurable(ids, device, out, on_skip)
    old = results.read_results(out) if out.is_file() else None
    plan = runner.Plan.make(quick, replicates)
    threads = threads or 1
    env = environment(device, threads)
    if ids:
        results.check_mergeable(old, device, env, runner.settings(plan))
    writer = results.ResultsWriter(out, old, replace=not ids)
    try:
        run = runner.run(
            measured,
            device=device,
            quick=quick,
            num_threads=threads,
            replicates=replicates,
            progress=progress,
            env=env,
            save=writer,
        )
    except KeyboardInterrupt:
        raise Interrupted(out, writer.measured) from None
    writer.finish(run)
    return Measured(run, out, measured, time.perf_counter() - start)
