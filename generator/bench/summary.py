"""The summary page ``docs/benchmarks.md``: per device, every measured tip with its ratio and
verdict, the chart, and the composer's overhead against a minimal loop.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from generator import paths
from generator.bench.chart import GOOD, LEGEND_KEYS, Bar, bar_chart, fmt_ratio
from generator.bench.results import ResultsFile
from generator.bench.stats import coverage
from generator.bench.texts import (
    cell,
    device_name,
    env_text,
    fmt_bytes,
    fmt_seconds,
    fmt_sizes,
    memory_text,
    regime_label,
    slower_by_design,
    time_text,
)
from generator.records.schema import Tip

#: The composer benchmark (generated script vs minimal loop), written by
#: ``benchmarks/compose_overhead.py``; shown on the summary page when present.
COMPOSE_OVERHEAD = paths.ROOT / "benchmarks" / "results" / "compose-overhead-cpu.json"


#: The problems (``tips/_problems.yaml``) whose reading order leads the time and the memory
#: chart: the tips a user who wants speed, or memory, reads first, not the micro-benchmarks
#: with the largest ratios (a 997622x faster ``gc.collect()``).
TIME_PROBLEM = "slow-training"
MEMORY_PROBLEM = "out-of-memory"


def reading_order(tips: Sequence[Tip], problem: str) -> Callable[[Bar], tuple[int, float]]:
    """A sort key for bars: the tips of ``problem`` first, in its reading order, then the
    others, largest ratio first (only by ratio when the problems do not load)."""
    from generator.errors import InvalidRecords
    from generator.records.problems import load_entry_points

    try:
        listed = load_entry_points(frozenset(str(t.id) for t in tips)).problems[problem].tips
    except (InvalidRecords, KeyError):
        listed = []
    rank = {f"../tips/{tip_id}/": i for i, tip_id in enumerate(listed)}
    return lambda bar: (rank.get(bar.href or "", len(rank)), -bar.value)


@dataclass
class SummaryRow:
    """One tip in a summary table."""

    tip: Tip
    result: str
    before: str
    after: str
    verdict: str
    extra: str = ""  # reported figures (time table) or the time cost (memory table)
    regime: str = ""  # the regime's label, for a tip measured in several
    sizes: str = ""


@dataclass
class DeviceSummary:
    """One device's section of the summary page."""

    key: str
    name: str
    env: str | None = None
    settings: str | None = None
    chart: str | None = None
    memory_chart: str | None = None
    regimes: bool = False  # some tip was measured in two regimes: explain them
    tradeoffs: bool = False  # some memory tip is slower by design: explain the trade-off
    time_rows: list[SummaryRow] = field(default_factory=list)
    memory_rows: list[SummaryRow] = field(default_factory=list)
    not_held: list[SummaryRow] = field(default_factory=list)
    failed: list[tuple[Tip, str]] = field(default_factory=list)
    not_measurable: list[tuple[Tip, str]] = field(default_factory=list)


def device_summary(
    device: str,
    tips: Sequence[Tip],
    file: ResultsFile | None,
    lang: str,
    L: Mapping[str, str],  # noqa: N803
) -> DeviceSummary:
    """The summary of one device: chart, tables, claims that did not hold, not measurable."""
    name = device_name(device, L)
    out = DeviceSummary(key=device, name=name)
    for tip in tips:
        if tip.bench is not None and device not in tip.bench.measured_devices():
            assert tip.bench.not_measurable is not None
            out.not_measurable.append((tip, cell(tip.bench.not_measurable.reason.get(lang))))
    if file is None:
        return out
    out.env = env_text(file.environment, device, L)
    s = file.settings
    out.settings = L["settings_line"].format(
        replicates=s.replicates,
        run=f"{s.min_run_time_s:g}",
        quick=L["quick"] if s.quick else "",
        cov=f"{coverage(s.replicates):.0%}",
    )
    bars, mem_bars = [], []
    measured = [
        (t, regime, res)
        for t in tips
        if t.bench is not None
        for regime, res in file.regimes(t.id or "")
    ]
    for tip, regime, res in measured:
        assert tip.bench is not None
        label = regime_label(regime, L)
        out.regimes = out.regimes or bool(label)
        title = tip.title.get(lang)
        bar_label = L["with_regime"].format(tip=title, regime=label) if label else title
        if res.error:
            out.failed.append((tip, cell(f"{label}: {res.error}" if label else res.error)))
            continue
        href = f"../tips/{tip.id}/"
        sizes = fmt_sizes(res.sizes)
        t = res.time
        time_result = time_text(t.ratio, t.low, t.high, t.verdict, L) if t else ""
        if t is not None and tip.bench.kind == "time":
            reported = "<br>".join(
                cell(f"{r.figure.get(lang)} ({r.hardware or L['bench_hw_not_stated']})")
                for r in tip.bench.reported
            )
            row = SummaryRow(
                tip,
                time_result,
                fmt_seconds(t.before.median_s),
                fmt_seconds(t.after.median_s),
                t.verdict,
                reported,
                label,
                sizes,
            )
            out.time_rows.append(row)
            bars.append(Bar(bar_label, t.ratio, t.low, t.high, t.verdict, href))
            if t.verdict not in GOOD:
                out.not_held.append(row)
        if res.memory is not None and tip.bench.memory is not None:
            m = res.memory
            what = cell(tip.bench.memory.what.get(lang))
            time_cost = time_result if tip.bench.kind == "memory" else ""
            note = None
            if t is not None and slower_by_design(tip, t.verdict):
                out.tradeoffs = True
                time_cost = L["bench_tradeoff"].format(result=time_result)
                note = L["chart_tradeoff"].format(ratio=fmt_ratio(1 / t.ratio))
            row = SummaryRow(
                tip,
                memory_text(m.ratio, m.verdict, what, L),
                fmt_bytes(m.before_bytes),
                fmt_bytes(m.after_bytes),
                m.verdict,
                time_cost,
                label,
                sizes,
            )
            out.memory_rows.append(row)
            if m.ratio is not None and m.ratio > 0:
                mem_bars.append(Bar(bar_label, m.ratio, m.ratio, m.ratio, m.verdict, href, note))
            elif m.ratio is None and m.verdict == "less-memory":  # the after form keeps none
                inf = math.inf
                mem_bars.append(
                    Bar(bar_label, inf, inf, inf, m.verdict, href, note, L["chart_none_left"])
                )
            if tip.bench.kind == "memory" and m.verdict not in GOOD:
                out.not_held.append(row)
    bars.sort(key=reading_order(tips, TIME_PROBLEM))
    mem_bars.sort(key=reading_order(tips, MEMORY_PROBLEM))
    if bars:
        legend = {k: L["legend_time_" + k] for k in LEGEND_KEYS}
        out.chart = bar_chart(bars, L["chart_title"].format(device=name), L["chart_axis"], legend)
    if mem_bars:
        legend = {k: L["legend_memory_" + k] for k in LEGEND_KEYS if k != "unsure"}
        out.memory_chart = bar_chart(
            mem_bars, L["memory_chart_title"].format(device=name), L["memory_chart_axis"], legend
        )
    return out


@dataclass
class ComposeView:
    """The composer benchmark on the summary page."""

    env: str
    workload: str
    rows: list[tuple[str, str]]
    command: str


def compose_overhead(
    lang: str,
    L: Mapping[str, str],  # noqa: N803
    path: Path = COMPOSE_OVERHEAD,
) -> ComposeView | None:
    """The composer benchmark (``benchmarks/compose_overhead.py``), or ``None`` when that
    file does not exist or lacks the throughputs."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        generated = float(data["generated_samples_per_s"])
        minimal = float(data["minimal_samples_per_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ratio = float(data.get("ratio", generated / minimal))
    overhead = float(data.get("overhead_percent", (1 - ratio) * 100))
    target = data.get("target_overhead_percent")
    where = [str(data.get("cpu", "?"))]
    if data.get("gpu"):
        where.insert(0, str(data["gpu"]))
    env = L["bench_compose_env"].format(
        where=", ".join(where),
        cores=data.get("cores", "?"),
        threads=data.get("torch_threads", data.get("threads", "?")),
        torch=data.get("torch", "?"),
        date=str(data.get("date", "?"))[:10],
    )
    rows = [
        (L["bench_compose_generated"], f"{generated:g} samples/s"),
        (L["bench_compose_minimal"], f"{minimal:g} samples/s"),
    ]
    estimator = data.get("measure") or data.get("estimator")
    if estimator:
        rows.append((L["bench_compose_estimator"], str(estimator)))
    rows += [
        (L["bench_compose_ratio"], f"{ratio:.3f}"),
        (L["bench_compose_overhead"], f"{overhead:.1f} %"),
    ]
    if target is not None:
        verdict = "bench_compose_within" if overhead <= float(target) else "bench_compose_above"
        rows.append((L["bench_compose_target"], L[verdict].format(target=target)))
    median_pair = data.get("median_pair_ratio", data.get("median_ratio"))
    if median_pair is not None:
        rows.append((L["bench_compose_median"], f"{float(median_pair):.3f}"))
    spread = data.get("pair_ratio_range") or data.get("pair_ratios")
    if spread:
        rows.append((L["bench_compose_pairs"], f"{min(spread):.3f}–{max(spread):.3f}"))
    return ComposeView(
        env=cell(env),
        workload=cell(str(data.get("workload", ""))),
        rows=[(cell(a), cell(b)) for a, b in rows],
        command=str(data.get("command", "python benchmarks/compose_overhead.py")),
    )
