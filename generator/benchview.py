"""What the site shows of the benchmark results: the "Measured" section of each tip page
and the summary page ``docs/benchmarks.md``, in English and Chinese.

Every figure shown comes from a results file written by ``python -m generator bench``
(`generator.results`); published figures from the records are shown beside them as
"reported". A device without a results file says "not yet measured", never a number. A tip
measured in two regimes (launch-bound, compute-bound) gets one row per regime, each with the
sizes it was measured at. The texts come from ``generator/templates/site/ui.yaml`` (passed in
as ``L``, see `generator.ui`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator import paths
from generator.chart import BAD, GOOD, LEGEND_KEYS, Bar, bar_chart, fmt_ratio
from generator.results import Environment, ResultsFile, TipResult, code_hash
from generator.schema import Tip
from generator.stats import TOLERANCE, coverage
from generator.taxonomy import DEVICES

#: The composer benchmark (generated script vs minimal loop), written by
#: ``benchmarks/compose_overhead.py``; shown on the summary page when present.
COMPOSE_OVERHEAD = paths.ROOT / "benchmarks" / "results" / "compose-overhead-cpu.json"

#: The relative difference never called significant, as the method text shows it.
TOLERANCE_TEXT = f"{TOLERANCE:.0%}"


def device_name(device: str, L: Mapping[str, str]) -> str:  # noqa: N803
    """The name a results device (``cpu``, ``cuda``) is shown under."""
    return L["device_name_" + device]


# --- number formats ------------------------------------------------------------------------


def fmt_seconds(s: float) -> str:
    """A duration with a readable unit: ``356 ms``, ``12.3 µs``, ``1.20 s``."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= scale or unit == "ns":
            v = s / scale
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    raise AssertionError  # pragma: no cover


def fmt_bytes(n: int) -> str:
    """A byte count in binary units: ``0 B``, ``512 B``, ``1.5 KiB``, ``24.0 MiB``."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError  # pragma: no cover


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


# --- texts ---------------------------------------------------------------------------------


def env_text(env: Environment, device: str, L: Mapping[str, str]) -> str:  # noqa: N803
    """Where a results file was measured, in one line (on CUDA: the GPU, its compute
    capability, memory and driver, the CUDA and torch versions)."""
    if device == "cuda":
        extra = []
        if env.gpu_memory_bytes:
            extra.append(
                L["bench_env_gpu_memory"].format(gib=f"{env.gpu_memory_bytes / 2**30:.0f}")
            )
        if env.gpu_driver:
            extra.append(L["bench_env_gpu_driver"].format(driver=env.gpu_driver))
        return L["bench_env_gpu"].format(
            gpu=env.gpu_name,
            cc=env.gpu_compute_capability,
            extra="".join(extra),
            torch=env.torch,
            cuda=env.cuda,
            date=env.date[:10],
        )
    return L["bench_env_cpu"].format(
        cores=env.cpu_cores,
        arch=env.cpu_arch,
        model=env.cpu_model,
        isa=f", {env.cpu_capability}" if env.cpu_capability else "",
        threads=env.num_threads,
        torch=env.torch,
        date=env.date[:10],
    )


def time_text(ratio: float, low: float, high: float, verdict: str, L: Mapping[str, str]) -> str:  # noqa: N803
    """``1.84× faster (1.69–1.98)``; a slow-down is shown as its own factor, above 1."""
    if verdict == "faster":
        return L["bench_faster"].format(
            ratio=fmt_ratio(ratio), low=fmt_ratio(low), high=fmt_ratio(high)
        )
    if verdict == "slower":
        return L["bench_slower"].format(
            ratio=fmt_ratio(1 / ratio), low=fmt_ratio(1 / high), high=fmt_ratio(1 / low)
        )
    return L["bench_same"].format(low=fmt_ratio(low), high=fmt_ratio(high))


def memory_text(ratio: float | None, verdict: str, what: str, L: Mapping[str, str]) -> str:  # noqa: N803
    """``2.00× less memory (what the bytes are)``."""
    if verdict == "less-memory":
        if ratio is None:
            return L["bench_less_all"].format(what=what)
        return L["bench_less"].format(ratio=fmt_ratio(ratio), what=what)
    if verdict == "more-memory":
        return L["bench_more"].format(ratio=fmt_ratio(1 / ratio if ratio else 1.0), what=what)
    return L["bench_mem_same"].format(what=what)


def slower_by_design(tip: Tip, verdict: str) -> bool:
    """A memory tip whose after form is slower: it pays time for the memory it saves."""
    return tip.bench is not None and tip.bench.kind == "memory" and verdict == "slower"


def _spread(median: float, q1: float, q3: float, L: Mapping[str, str]) -> str:  # noqa: N803
    return L["bench_spread"].format(
        median=fmt_seconds(median), q1=fmt_seconds(q1), q3=fmt_seconds(q3)
    )


def fmt_sizes(sizes: Mapping[str, object]) -> str:
    """The sizes a result was measured at, as a code span: ``batch=256, width=4096``."""
    if not sizes:
        return ""
    text = ", ".join(
        f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in sizes.items()
    )
    return f"`{_cell(text)}`"


def regime_label(regime: str, L: Mapping[str, str]) -> str:  # noqa: N803
    """``launch-bound`` / ``compute-bound`` in the page's language; empty for ``default``."""
    return "" if regime == "default" else L["regime_" + regime.replace("-", "_")]


def device_label(name: str, regime: str, L: Mapping[str, str]) -> str:  # noqa: N803
    """``CUDA`` or, for one of several regimes, ``CUDA, compute-bound``."""
    label = regime_label(regime, L)
    return L["device_regime"].format(device=name, regime=label) if label else name


# --- tip page ------------------------------------------------------------------------------


@dataclass
class Row:
    """One line of a tip's "Measured" table."""

    device: str
    result: str
    before: str = ""
    after: str = ""
    env: str = ""
    verdict: str | None = None
    sizes: str = ""


@dataclass
class Note:
    """An admonition under the table (a negative or null result)."""

    kind: str  # warning | info
    title: str
    body: str


@dataclass
class TipView:
    """Everything the "Measured" section of one tip page shows, in one language."""

    rows: list[Row]
    message: str | None = None
    regimes: bool = False  # some device was measured in two regimes: explain them
    notes: list[Note] = field(default_factory=list)
    reported: list[str] = field(default_factory=list)
    workload: str | None = None
    code: list[tuple[str, str]] = field(default_factory=list)  # (title, python)


def _result_rows(
    tip: Tip,
    res: TipResult,
    device: str,
    name: str,
    env: str,
    L: Mapping[str, str],  # noqa: N803
    lang: str,
) -> list[Row]:
    """The rows of one result (one regime); ``name`` labels the device (and regime)."""
    assert tip.bench is not None
    sizes = fmt_sizes(res.sizes)
    if res.error:
        error = _cell(L["bench_failed"].format(error=res.error))
        return [Row(name, error, env=env, sizes=sizes)]
    stale = "" if res.code == code_hash(tip, device) else " " + L["bench_stale"].format(id=tip.id)
    rows = []
    if res.time is not None:
        t = res.time
        text = time_text(t.ratio, t.low, t.high, t.verdict, L)
        if tip.bench.kind == "memory":
            if slower_by_design(tip, t.verdict):
                text = L["bench_tradeoff"].format(result=text)
            text = L["bench_time_of_memory"].format(result=text)
        rows.append(
            Row(
                name,
                text + stale,
                _spread(t.before.median_s, t.before.q1_s, t.before.q3_s, L),
                _spread(t.after.median_s, t.after.q1_s, t.after.q3_s, L),
                env,
                t.verdict,
                sizes,
            )
        )
    if res.memory is not None and tip.bench.memory is not None:
        m = res.memory
        what = _cell(tip.bench.memory.what.get(lang))
        before, after = fmt_bytes(m.before_bytes), fmt_bytes(m.after_bytes)
        result = memory_text(m.ratio, m.verdict, what, L) + stale
        row = Row(name, result, before, after, env, m.verdict, sizes)
        if tip.bench.kind == "memory":
            rows.insert(0, row)
        else:
            rows.append(row)
    return rows


def _source_md(source: Any, seeds: Mapping[str, Any], lang: str) -> str:
    if source.seed:
        return seeds[source.seed].get(lang)
    return f"[{source.title}]({source.url})"


def tip_view(
    tip: Tip,
    results: Mapping[str, ResultsFile],
    lang: str,
    L: Mapping[str, str],  # noqa: N803
    seeds: Mapping[str, str],
) -> TipView | None:
    """The "Measured" section of ``tip``; ``None`` when the tip makes no speed/memory claim."""
    bench = tip.bench
    if bench is None:
        if not {"speed", "memory"} & set(tip.impact):
            return None
        return TipView(rows=[], message=L["bench_no_bench"])
    rows: list[Row] = []
    notes: list[Note] = []
    regimes = False
    for device in ("cpu", "cuda"):
        name = device_name(device, L)
        if device not in bench.measured_devices():
            assert bench.not_measurable is not None
            reason = _cell(bench.not_measurable.reason.get(lang))
            text = L["bench_not_measurable"].format(device=name, reason=reason)
            rows.append(Row(name, text))
            continue
        file = results.get(device)
        measured = file.regimes(tip.id or "") if file else []
        if file is None or not measured:
            rows.append(Row(name, L["bench_not_yet"].format(device=name)))
            continue
        env = env_text(file.environment, device, L)
        for regime, res in measured:
            label = device_label(name, regime, L)
            regimes = regimes or regime != "default"
            device_rows = _result_rows(tip, res, device, label, env, L, lang)
            rows += device_rows
            if not device_rows or device_rows[0].verdict is None:
                continue
            verdict, result = device_rows[0].verdict, device_rows[0].result
            if verdict in BAD:
                notes.append(
                    Note(
                        "warning",
                        L["bench_worse_title"].format(device=label),
                        L["bench_worse_body"].format(env=env, result=result),
                    )
                )
            elif verdict not in GOOD:
                notes.append(
                    Note(
                        "info",
                        L["bench_same_title"].format(device=label),
                        L["bench_same_body"].format(env=env, result=result),
                    )
                )
    reported = [
        L["reported_line"].format(
            figure=r.figure.get(lang),
            hardware=r.hardware or L["bench_hw_not_stated"],
            source=_source_md(r.source, seeds, lang),
        )
        for r in bench.reported
    ]
    code: list[tuple[str, str]] = []
    if bench.setup:
        code.append((L["bench_setup"], bench.setup))
    if bench.before and bench.after:
        code += [(L["bench_timed_before"], bench.before), (L["bench_timed_after"], bench.after)]
    if bench.memory is not None:
        mem = f"before_bytes = {bench.memory.before.strip()}\nafter_bytes = {bench.memory.after.strip()}\n"
        code.append((L["bench_memory_code"], mem))
    workload = bench.workload.get(lang) if bench.workload else None
    return TipView(
        rows=rows, regimes=regimes, notes=notes, reported=reported, workload=workload, code=code
    )


def verified(
    tip: Tip, results: Mapping[str, ResultsFile], lang: str, L: Mapping[str, str]
) -> str | None:  # noqa: N803
    """The "Verified" line near the top of a tip page: per device the tip's code runs on,
    what ran it, from data only.

    ``✓ (torch X, DATE)``: the device's results file holds a current, successful result of
    this tip (its benchmark ran there, with that torch, on that day). ``✓ (test suite)``, on
    CPU only: the snippets and their checks run in every test-suite run. Otherwise ``not
    yet``: nothing recorded a run on that hardware. ``None`` for a tip without code.
    """
    if not tip.variants():
        return None
    parts = []
    for device in tip.hardware.devices:
        name = DEVICES[device].get(lang)
        file = results.get(device)
        measured = file.regimes(tip.id or "") if file else []
        current = (
            file is not None
            and tip.bench is not None
            and bool(measured)
            and all(not r.error and r.code == code_hash(tip, device) for _, r in measured)
        )
        if current:
            assert file is not None
            env = file.environment
            parts.append(
                L["verified_measured"].format(device=name, torch=env.torch, date=env.date[:10])
            )
        elif device == "cpu":
            parts.append(L["verified_suite"].format(device=name))
        else:
            parts.append(L["verified_not_yet"].format(device=name))
    return " · ".join(parts)


# --- summary page --------------------------------------------------------------------------


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
            out.not_measurable.append((tip, _cell(tip.bench.not_measurable.reason.get(lang))))
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
            out.failed.append((tip, _cell(f"{label}: {res.error}" if label else res.error)))
            continue
        href = f"../tips/{tip.id}/"
        sizes = fmt_sizes(res.sizes)
        t = res.time
        time_result = time_text(t.ratio, t.low, t.high, t.verdict, L) if t else ""
        if t is not None and tip.bench.kind == "time":
            reported = "<br>".join(
                _cell(f"{r.figure.get(lang)} ({r.hardware or L['bench_hw_not_stated']})")
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
            what = _cell(tip.bench.memory.what.get(lang))
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
    bars.sort(key=lambda b: -b.value)
    mem_bars.sort(key=lambda b: -b.value)
    if bars:
        legend = {k: L["legend_time_" + k] for k in LEGEND_KEYS}
        out.chart = bar_chart(bars, L["chart_title"].format(device=name), L["chart_axis"], legend)
    if mem_bars:
        legend = {k: L["legend_memory_" + k] for k in LEGEND_KEYS}
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
        env=_cell(env),
        workload=_cell(str(data.get("workload", ""))),
        rows=[(_cell(a), _cell(b)) for a, b in rows],
        command=str(data.get("command", "python benchmarks/compose_overhead.py")),
    )
