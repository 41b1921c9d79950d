"""The words and number formats of the benchmark views: durations, bytes, ratios with their
interval, the machine a result was measured on, the regime and size labels. The texts come
from ``generator/templates/site/ui.yaml`` (passed in as ``L``). Also the lines
``python -m generator bench`` prints (`result_lines` and the others at the end).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from generator.bench.chart import fmt_ratio
from generator.bench.results import Environment, ResultsFile, TipResult
from generator.bench.stats import TOLERANCE
from generator.command import relative
from generator.records.schema import Tip

#: The relative difference never called significant, as the method text shows it.
TOLERANCE_TEXT = f"{TOLERANCE:.0%}"


def device_name(device: str, L: Mapping[str, str]) -> str:
    """The name a results device (``cpu``, ``cuda``) is shown under."""
    return L["device_name_" + device]


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


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def env_text(env: Environment, device: str, L: Mapping[str, str]) -> str:
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


def time_text(ratio: float, low: float, high: float, verdict: str, L: Mapping[str, str]) -> str:
    """``1.84× faster (1.69–1.98)``; a slow-down is shown as its own factor, above 1."""
    if verdict == "faster":
        return L["bench_faster"].format(
            ratio=fmt_ratio(ratio), low=fmt_ratio(low), high=fmt_ratio(high)
        )
    if verdict == "slower":
        return L["bench_slower"].format(
            ratio=fmt_ratio(1 / ratio), low=fmt_ratio(1 / high), high=fmt_ratio(1 / low)
        )
    if verdict == "inconclusive":
        return L["bench_inconclusive"].format(
            ratio=fmt_ratio(ratio), low=fmt_ratio(low), high=fmt_ratio(high)
        )
    return L["bench_same"].format(low=fmt_ratio(low), high=fmt_ratio(high))


def memory_text(ratio: float | None, verdict: str, what: str, L: Mapping[str, str]) -> str:
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


def spread(median: float, q1: float, q3: float, L: Mapping[str, str]) -> str:
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
    return f"`{cell(text)}`"


def regime_label(regime: str, L: Mapping[str, str]) -> str:
    """``launch-bound`` / ``compute-bound`` in the page's language; empty for ``default``."""
    return "" if regime == "default" else L["regime_" + regime.replace("-", "_")]


def device_label(name: str, regime: str, L: Mapping[str, str]) -> str:
    """``CUDA`` or, for one of several regimes, ``CUDA, compute-bound``."""
    label = regime_label(regime, L)
    return L["device_regime"].format(device=name, regime=label) if label else name


# --- the lines of ``python -m generator bench`` --------------------------------------------


def skip_line(tip: Tip, device: str) -> str:
    """A tip not measurable on ``device``, with the first line of the reason."""
    assert tip.bench is not None and tip.bench.not_measurable is not None
    reason = tip.bench.not_measurable.reason.en.splitlines()[0]
    return f"skip {tip.id}: not measurable on {device}: {reason}"


def _result_line(name: str, width: int, res: TipResult) -> str:
    if res.error:
        return f"{name:<{width}}  FAILED: {res.error}"
    assert res.time is not None
    t = res.time
    line = (
        f"{name:<{width}}  {t.before.median_s * 1e3:9.3f} ms -> "
        f"{t.after.median_s * 1e3:9.3f} ms  x{t.ratio:.2f} ({t.low:.2f}-{t.high:.2f})"
        f"  {t.verdict}"
    )
    if res.memory is not None:
        m = res.memory
        line += f"  | {m.before_bytes} -> {m.after_bytes} bytes {m.verdict}"
    return line


def result_lines(run: ResultsFile) -> list[str]:
    """One line per tip and regime of ``run``: the medians before and after, the ratio with
    its interval and the verdict (and the bytes), or why it failed; names in one column."""
    rows = [
        (tip_id if regime == "default" else f"{tip_id} ({regime})", res)
        for tip_id in run.results
        for regime, res in run.regimes(tip_id)
    ]
    width = max((len(name) for name, _ in rows), default=0)
    return [_result_line(name, width, res) for name, res in rows]


def interrupted_line(out: Path, kept: int) -> str:
    """What an interrupted run left in ``out``."""
    return f"interrupted: {relative(out)} keeps the {kept} tip(s) measured so far"


def wrote_line(out: Path, tips: int, elapsed_s: float) -> str:
    """The last line of a finished run."""
    return f"\nwrote {relative(out)}: {tips} tip(s) measured in {elapsed_s:.0f} s."
