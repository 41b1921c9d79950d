"""Measure each tip's claim: the before and the after form, timed with ``torch.utils.benchmark``.

For every tip with a ``bench`` section, `measure_tip` runs ``bench.setup`` once in a
fresh namespace, then times ``bench.before`` and ``bench.after`` with
`torch.utils.benchmark.Timer` (fixed thread count; ``blocked_autorange`` warms up,
picks a block size and, on CUDA, synchronises around every block) in interleaved
replicates, so a slow drift of the machine hits both forms alike. Statistics and verdicts
come from `generator.bench.stats`; the output is a `generator.bench.results.ResultsFile`.

Sizes: a tip measures once per entry of ``bench.sizes.<device>`` (one per regime, e.g.
``launch-bound`` and ``compute-bound`` on CUDA); the entry's names are defined in the
namespace before ``bench.setup`` runs. A bench without sizes for the device runs once, as
the ``default`` regime.

The namespace is the ``__dict__`` of a real module, registered in ``sys.modules`` as
`NAMESPACE_MODULE` while the tip is measured, so code that imports the module of a
function defined in ``setup`` (``torch.compile`` does, when it inlines one) finds it.

Memory comes second: `run` times every tip first, then evaluates the ``bench.memory``
expressions of each tip in a fresh setup namespace. Bench code can call three helpers:
`tensor_bytes`, `saved_tensor_bytes` and ``peak_bytes`` (see
`make_peak_bytes`); ``device`` is predefined. Each tip runs in the benchmark's own
process; the global switches it may flip (grad mode, anomaly detection, matmul precision,
thread count, ...) are restored afterwards.

torch is imported inside the functions that measure, so importing this module is cheap.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from generator.bench.machine import check_device, environment, now
from generator.bench.memory import glibc_returns_freed_memory
from generator.bench.namespace import bench_namespace, regime_of, restored_torch_state, size_entries
from generator.bench.results import (
    SCHEMA_VERSION,
    Environment,
    FormTime,
    MemoryResult,
    ResultsFile,
    Settings,
    TimeResult,
    TipResult,
    code_hash,
)
from generator.bench.stats import (
    TOLERANCE,
    memory_ratio,
    memory_verdict,
    speedup,
    summarize,
    time_verdict,
)
from generator.records.benchspec import BenchSize
from generator.records.schema import Tip

FORMS = ("before", "after")


@dataclass(frozen=True)
class Plan:
    """Replicates and timing per replicate of a run."""

    quick: bool
    replicates: int
    min_run_time_s: float

    @classmethod
    def make(cls, quick: bool, replicates: int | None = None) -> Plan:
        """The default plan: 5 replicates of 0.1 s with ``quick``, else 7 of 0.25 s."""
        default = 5 if quick else 7
        return cls(quick, replicates or default, 0.1 if quick else 0.25)


# --- helpers available to bench code -------------------------------------------------------


# --- environment ---------------------------------------------------------------------------


def settings(plan: Plan) -> Settings:
    """The settings block of a results file measured with ``plan``."""
    return Settings(
        quick=plan.quick,
        replicates=plan.replicates,
        min_run_time_s=plan.min_run_time_s,
        tolerance=TOLERANCE,
    )


# --- measuring -----------------------------------------------------------------------------


def _form_time(medians: list[float], blocks: list[float], runs: list[int]) -> FormTime:
    s = summarize(blocks)
    return FormTime(
        median_s=s.median,
        q1_s=s.q1,
        q3_s=s.q3,
        min_s=s.min,
        max_s=s.max,
        replicate_medians_s=medians,
        blocks=s.n,
        runs_per_block=runs,
    )


def _finite(value: float) -> float | None:
    return None if math.isinf(value) else value


def _prepare(tip: Tip, ns: dict[str, Any]) -> dict[str, Any]:
    """Run the tip's setup in ``ns``; return its two statements compiled."""
    bench = tip.bench
    assert bench is not None and bench.before is not None and bench.after is not None
    where = f"tips/{tip.id}.yaml"
    exec(compile(bench.setup or "pass", f"{where}:bench.setup", "exec"), ns)
    return {f: compile(getattr(bench, f), f"{where}:bench.{f}", "exec") for f in FORMS}


def measure_time(
    tip: Tip,
    device: str,
    plan: Plan,
    num_threads: int,
    tick: Callable[[], None] = lambda: None,
    size: BenchSize | None = None,
) -> TimeResult:
    """Time the before and after statements of ``tip`` at ``size`` in interleaved replicates.

    ``tick`` is called after each timed replicate of each form (2 × replicates times).
    Exceptions of the bench code propagate.
    """
    assert tip.bench is not None
    with bench_namespace(device, size) as ns:
        return _time_forms(tip, ns, _prepare(tip, ns), plan, num_threads, tick)


def _time_forms(
    tip: Tip,
    ns: dict[str, Any],
    compiled: dict[str, Any],
    plan: Plan,
    num_threads: int,
    tick: Callable[[], None],
) -> TimeResult:
    from torch.utils.benchmark import Timer

    assert tip.bench is not None
    for form in FORMS:  # first runs: lazy initialisation, compilation, caches
        for _ in range(2):
            exec(compiled[form], dict(ns))
    timers = {
        f: Timer(stmt=getattr(tip.bench, f), globals=ns, num_threads=num_threads) for f in FORMS
    }
    medians: dict[str, list[float]] = {f: [] for f in FORMS}
    blocks: dict[str, list[float]] = {f: [] for f in FORMS}
    runs: dict[str, list[int]] = {f: [] for f in FORMS}
    for rep in range(plan.replicates):
        for form in FORMS if rep % 2 == 0 else FORMS[::-1]:
            m = timers[form].blocked_autorange(min_run_time=plan.min_run_time_s)
            medians[form].append(m.median)
            blocks[form].extend(m.times)
            runs[form].append(m.number_per_run)
            tick()
    ratio = speedup(medians["before"], medians["after"])
    return TimeResult(
        before=_form_time(medians["before"], blocks["before"], runs["before"]),
        after=_form_time(medians["after"], blocks["after"], runs["after"]),
        ratio=ratio.value,
        low=ratio.low,
        high=ratio.high,
        verdict=time_verdict(ratio),
    )


def measure_memory(tip: Tip, device: str, size: BenchSize | None = None) -> MemoryResult:
    """Evaluate ``bench.memory`` of ``tip`` at ``size``: each expression right after one
    more run of its form's statement, in a copy of the setup namespace (so it sees what the
    run left).

    On CPU this switches glibc to unmapping freed blocks for the rest of the process (see
    ``peak_bytes``), which changes allocation costs: measure time first.
    """
    assert tip.bench is not None and tip.bench.memory is not None
    if device != "cuda":
        glibc_returns_freed_memory()
    nbytes = {}
    with bench_namespace(device, size) as ns:
        compiled = _prepare(tip, ns)
        for form in FORMS:
            scope = dict(ns)
            exec(compiled[form], scope)
            expr = getattr(tip.bench.memory, form).strip()
            code = compile(expr, f"tips/{tip.id}.yaml:bench.memory.{form}", "eval")
            nbytes[form] = int(eval(code, scope))
            del scope
    return MemoryResult(
        before_bytes=nbytes["before"],
        after_bytes=nbytes["after"],
        ratio=_finite(memory_ratio(nbytes["before"], nbytes["after"])),
        verdict=memory_verdict(nbytes["before"], nbytes["after"]),
    )


def _error(err: Exception) -> str:
    return f"{type(err).__name__}: {err}".splitlines()[0][:300]


def measure_tip(
    tip: Tip,
    device: str,
    plan: Plan,
    num_threads: int,
    tick: Callable[[], None] = lambda: None,
    memory: bool = True,
    size: BenchSize | None = None,
) -> TipResult:
    """Measure one tip on ``device`` at ``size`` (one regime): time, then (with ``memory``)
    bytes.

    A failure of the bench code is recorded in the result's ``error``, not raised.
    """
    bench = tip.bench
    assert bench is not None
    result = TipResult(
        kind=bench.kind,
        code=code_hash(tip, device),
        measured_at=now(),
        sizes=dict(size.values) if size is not None else {},
    )
    try:
        with restored_torch_state():
            result = result.model_copy(
                update={"time": measure_time(tip, device, plan, num_threads, tick, size)}
            )
    except Exception as err:  # any error in bench code is a result to report
        return result.model_copy(update={"error": _error(err)})
    return add_memory(tip, device, result, size) if memory else result


def add_memory(
    tip: Tip, device: str, result: TipResult, size: BenchSize | None = None
) -> TipResult:
    """``result`` with the memory figures of ``tip`` at ``size`` (or the error measuring
    them) added."""
    if tip.bench is None or tip.bench.memory is None or result.error:
        return result
    try:
        with restored_torch_state():
            return result.model_copy(update={"memory": measure_memory(tip, device, size)})
    except Exception as err:
        return result.model_copy(update={"error": _error(err)})


def benchmarkable(tips: Iterable[Tip], device: str) -> tuple[list[Tip], list[Tip]]:
    """Split tips with a bench section into (measured on ``device``, not measurable there)."""
    measured: list[Tip] = []
    skipped: list[Tip] = []
    for tip in tips:
        if tip.bench is None:
            continue
        (measured if device in tip.bench.measured_devices() else skipped).append(tip)
    return measured, skipped


def run(
    tips: Sequence[Tip],
    device: str = "cpu",
    quick: bool = False,
    num_threads: int | None = None,
    replicates: int | None = None,
    progress: bool = True,
    env: Environment | None = None,
    save: Callable[[ResultsFile], None] | None = None,
) -> ResultsFile:
    """Measure ``tips`` (all of which must have a bench section measurable on ``device``),
    each once per size entry of the device (see `size_entries`).

    Args:
        tips: the tips to measure.
        device: ``cpu`` or ``cuda``.
        quick: shorter timing per replicate (the whole knowledge base in under 3 minutes).
        num_threads: torch intra-op threads while timing (default 1, as
            ``torch.utils.benchmark.Timer``: comparisons stay stable on a busy machine).
        replicates: interleaved replicates per form (default 5 with ``quick``, else 7).
        progress: show a progress bar on stderr.
        env: the environment to record (default: `environment` of this machine).
        save: called with the results so far after each tip is timed and after each tip's
            memory is measured (e.g. `generator.bench.results.ResultsWriter`), so an
            interrupted run keeps what it measured.

    Raises:
        UserError: the device is not available.
    """
    from tqdm import tqdm

    check_device(device)
    threads = num_threads or 1
    plan = Plan.make(quick, replicates)
    env = env or environment(device, threads)
    results: dict[str, dict[str, TipResult]] = {}

    def snapshot() -> ResultsFile:
        return ResultsFile(
            schema_version=SCHEMA_VERSION,
            device=device,
            environment=env,
            settings=settings(plan),
            results={k: dict(v) for k, v in results.items()},
        )

    entries = {tip.id: size_entries(tip, device) for tip in tips}
    with_memory = [t for t in tips if t.bench is not None and t.bench.memory is not None]
    with tqdm(
        total=sum(len(e) for e in entries.values()) * 2 * plan.replicates
        + sum(len(entries[t.id]) for t in with_memory),
        desc=f"bench {device}",
        unit="rep",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        for tip in tips:  # all timings first: the memory phase changes how glibc allocates
            assert tip.id is not None
            results[tip.id] = {}
            for size in entries[tip.id]:
                regime = regime_of(size)
                bar.set_postfix_str(tip.id if regime == "default" else f"{tip.id} ({regime})")
                done = bar.n
                results[tip.id][regime] = measure_tip(
                    tip, device, plan, threads, tick=lambda: bar.update(1), memory=False, size=size
                )
                bar.update(done + 2 * plan.replicates - bar.n)  # a failure skips replicates
            if save is not None:
                save(snapshot())
        for tip in with_memory:
            assert tip.id is not None
            for size in entries[tip.id]:
                regime = regime_of(size)
                bar.set_postfix_str(f"{tip.id} (memory)")
                results[tip.id][regime] = add_memory(tip, device, results[tip.id][regime], size)
                bar.update(1)
            if save is not None:
                save(snapshot())
    return snapshot()
