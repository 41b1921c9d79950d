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
from generator.bench.results import MemoryResult, ResultsFile, Settings, TimeResult, TipResult
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
from generator.records.benchspec import Bench
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
    #: Micro-benchmarks (`Bench.operation`): (tip, "one GC pass: 242 ms → 110 ns"), off the
    #: step-speed chart.
    operations: list[tuple[Tip, str]] = field(default_factory=list)
    memory_rows: list[SummaryRow] = field(default_factory=list)
    not_held: list[SummaryRow] = field(default_factory=list)
    failed: list[tuple[Tip, str]] = field(default_factory=list)
    not_measurable: list[tuple[Tip, str]] = field(default_factory=list)


def device_summary(
    device: str,
    tips: Sequence[Tip],
    file: ResultsFile | None,
    lang: str,
    L: Mapping[str, str],
) -> DeviceSummary:
    """The summary of one device: chart, tables, claims that did not hold, not measurable."""
    out = DeviceSummary(key=device, name=device_name(device, L))
    out.not_measurable = _not_measurable(device, tips, lang)
    if file is None:
        return out
    out.env = env_text(file.environment, device, L)
    out.settings = _settings_line(file.settings, L)
    rows = _Rows(out, lang, L)
    for tip in tips:
        if tip.bench is not None:
            for regime, res in file.regimes(tip.id or ""):
                rows.add(tip, regime, res)
    _charts(out, tips, rows, L)
    return out


def _not_measurable(device: str, tips: Sequence[Tip], lang: str) -> list[tuple[Tip, str]]:
    """The tips with a bench section not measurable on ``device``, with the reason."""
    out = []
    for tip in tips:
        if tip.bench is not None and device not in tip.bench.measured_devices():
            assert tip.bench.not_measurable is not None
            out.append((tip, cell(tip.bench.not_measurable.reason.get(lang))))
    return out


def _settings_line(s: Settings, L: Mapping[str, str]) -> str:
    """How a results file was measured: replicates, run time, quick, coverage."""
    return L["settings_line"].format(
        replicates=s.replicates,
        run=f"{s.min_run_time_s:g}",
        quick=L["quick"] if s.quick else "",
        cov=f"{coverage(s.replicates):.0%}",
    )


@dataclass(frozen=True)
class _Entry:
    """One result of a tip (one regime), with what its rows and bars share."""

    tip: Tip
    bench: Bench
    label: str  # the regime's label; empty for a tip measured in one
    bar_label: str
    href: str
    sizes: str
    time_result: str  # the time verdict in words; empty without a time result


@dataclass
class _Rows:
    """Fills a `DeviceSummary`'s tables, one result at a time, and collects the bars of its
    time and memory charts."""

    out: DeviceSummary
    lang: str
    L: Mapping[str, str]
    bars: list[Bar] = field(default_factory=list)
    memory_bars: list[Bar] = field(default_factory=list)

    def add(self, tip: Tip, regime: str, res: TipResult) -> None:
        """The rows (and bars) of ``tip``'s result ``res`` in ``regime``."""
        label = regime_label(regime, self.L)
        self.out.regimes = self.out.regimes or bool(label)
        if res.error:
            self.out.failed.append((tip, cell(f"{label}: {res.error}" if label else res.error)))
            return
        entry = self._entry(tip, label, res)
        t = res.time
        if t is not None and entry.bench.kind == "time":
            self._time(entry, t)
        if res.memory is not None and entry.bench.memory is not None:
            self._memory(entry, res.memory, t)

    def _entry(self, tip: Tip, label: str, res: TipResult) -> _Entry:
        assert tip.bench is not None
        title = tip.title.get(self.lang)
        t = res.time
        return _Entry(
            tip,
            tip.bench,
            label,
            self.L["with_regime"].format(tip=title, regime=label) if label else title,
            f"../tips/{tip.id}/",
            fmt_sizes(res.sizes),
            time_text(t.ratio, t.low, t.high, t.verdict, self.L) if t else "",
        )

    def _time(self, entry: _Entry, t: TimeResult) -> None:
        unstated = self.L["bench_hw_not_stated"]
        reported = "<br>".join(
            cell(
                self.L["bench_reported_cell"].format(
                    figure=r.figure.get(self.lang), hardware=r.hardware_in(self.lang) or unstated
                )
            )
            for r in entry.bench.reported
        )
        row = SummaryRow(
            entry.tip,
            entry.time_result,
            fmt_seconds(t.before.median_s),
            fmt_seconds(t.after.median_s),
            t.verdict,
            reported,
            entry.label,
            entry.sizes,
        )
        self.out.time_rows.append(row)
        operation = entry.bench.operation
        if operation is None:
            self.bars.append(Bar(entry.bar_label, t.ratio, t.low, t.high, t.verdict, entry.href))
        else:
            figure = self.L["bench_operation_figure"].format(
                operation=operation.get(self.lang),
                before=fmt_seconds(t.before.median_s),
                after=fmt_seconds(t.after.median_s),
            )
            label = f" ({entry.label})" if entry.label else ""
            self.out.operations.append((entry.tip, figure + label))
        if t.verdict not in GOOD:
            self.out.not_held.append(row)

    def _memory(self, entry: _Entry, m: MemoryResult, t: TimeResult | None) -> None:
        assert entry.bench.memory is not None
        what = cell(entry.bench.memory.what.get(self.lang))
        time_cost = entry.time_result if entry.bench.kind == "memory" else ""
        note = None
        if t is not None and slower_by_design(entry.tip, t.verdict):
            self.out.tradeoffs = True
            time_cost = self.L["bench_tradeoff"].format(result=entry.time_result)
            note = self.L["chart_tradeoff"].format(ratio=fmt_ratio(1 / t.ratio))
        row = SummaryRow(
            entry.tip,
            memory_text(m.ratio, m.verdict, what, self.L),
            fmt_bytes(m.before_bytes),
            fmt_bytes(m.after_bytes),
            m.verdict,
            time_cost,
            entry.label,
            entry.sizes,
        )
        self.out.memory_rows.append(row)
        bar = _memory_bar(entry, m, note, self.L)
        if bar is not None:
            self.memory_bars.append(bar)
        if entry.bench.kind == "memory" and m.verdict not in GOOD:
            self.out.not_held.append(row)


def _memory_bar(
    entry: _Entry, m: MemoryResult, note: str | None, L: Mapping[str, str]
) -> Bar | None:
    """The memory chart's bar of a result: its ratio, or cut at the edge when the after form
    keeps no memory at all; none for a ratio that cannot be drawn."""
    if m.ratio is not None and m.ratio > 0:
        return Bar(entry.bar_label, m.ratio, m.ratio, m.ratio, m.verdict, entry.href, note)
    if m.ratio is None and m.verdict == "less-memory":
        inf = math.inf
        return Bar(
            entry.bar_label, inf, inf, inf, m.verdict, entry.href, note, L["chart_none_left"]
        )
    return None


def _charts(out: DeviceSummary, tips: Sequence[Tip], rows: _Rows, L: Mapping[str, str]) -> None:
    """The time and the memory chart of ``out``, each bar in its problem's reading order."""
    bars = sorted(rows.bars, key=reading_order(tips, TIME_PROBLEM))
    memory_bars = sorted(rows.memory_bars, key=reading_order(tips, MEMORY_PROBLEM))
    if bars:
        legend = {k: L["legend_time_" + k] for k in LEGEND_KEYS}
        out.chart = bar_chart(
            bars, L["chart_title"].format(device=out.name), L["chart_axis"], legend
        )
    if memory_bars:
        legend = {k: L["legend_memory_" + k] for k in LEGEND_KEYS if k != "unsure"}
        out.memory_chart = bar_chart(
            memory_bars,
            L["memory_chart_title"].format(device=out.name),
            L["memory_chart_axis"],
            legend,
        )


@dataclass
class ComposeView:
    """The composer benchmark on the summary page."""

    env: str
    workload: str
    rows: list[tuple[str, str]]
    command: str


def compose_overhead(
    lang: str,
    L: Mapping[str, str],
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
