"""A horizontal bar chart of ratios on a log scale, with interval whiskers, as HTML and CSS.

Rendered at build time by the site generator: no JavaScript, no chart library, nothing
fetched. The chart is plain HTML (a list, one item per bar) positioned with percentages, so
its text is real page text: it wraps, stays readable on a phone, follows the light and dark
theme, and its labels can be titles with inline code. The styles live in
``docs/assets/extra.css`` (``.bench-chart``); each row carries a class per verdict
(``bench-row--good``, ``--bad``, ``--same``) and the legend names the three colours.

The log axis reaches the largest and the smallest ratio, except for outliers: a ratio more
than `OUTLIER` times beyond the next one, or beyond the upper quartile of a chart's ratios,
is drawn to the edge of the axis with a break mark (``bench-cut``), and its label gives the
exact value, so a few huge ratios do not flatten every other bar.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from generator.bench.stats import quantile
from generator.records.render import inline_html, plain_text

#: Verdicts drawn as an improvement, a regression, or replicates that disagree (any other
#: verdict is drawn as no significant difference).
GOOD = {"faster", "less-memory"}
BAD = {"slower", "more-memory"}
UNSURE = {"inconclusive"}

#: A ratio more than this many times beyond the next one is cut with a break mark.
OUTLIER = 16.0

#: An axis of more doublings than this labels every other tick only (``bench-chart--dense``).
DENSE = 8

#: The legend entries, in order (keys of the ``legend`` argument of `bar_chart`).
LEGEND_KEYS = ("good", "bad", "same", "unsure", "cut")


@dataclass(frozen=True)
class Bar:
    """One row of the chart: a ratio (above 1: the after form is better) and its interval.

    ``label`` may hold Markdown code spans (rendered as ``<code>``); ``value`` may be
    ``math.inf`` (e.g. the after form keeps no memory at all), drawn cut at the edge with
    ``value_text`` as its label. ``note`` is a line shown under the label.
    """

    label: str
    value: float
    low: float
    high: float
    verdict: str
    href: str | None = None
    note: str | None = None
    value_text: str | None = None


def fmt_ratio(x: float) -> str:
    """A ratio as the site shows it: ``0.52``, ``1.84``, ``12.3``, ``150``."""
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def value_label(x: float) -> str:
    """The label beside a bar: ``4.40×``, and a slow-down as a fraction, ``1/15.7×``."""
    if math.isinf(x):
        return "∞"
    return f"{fmt_ratio(x)}×" if x >= 1 else f"1/{fmt_ratio(1 / x)}×"


def _tick_label(exp: int) -> str:
    return f"{2**exp:g}×" if exp >= 0 else f"1/{2**-exp:g}×"


def kind(verdict: str) -> str:
    """``good``, ``bad``, ``unsure`` or ``same``: the colour class of a verdict."""
    if verdict in GOOD:
        return "good"
    return "bad" if verdict in BAD else "unsure" if verdict in UNSURE else "same"


#: With at least this many bars, a ratio more than `OUTLIER` times their upper quartile is
#: cut too: a few micro-benchmarks (543×, 64×) would otherwise stretch the axis so far that
#: the ratios of the tips most readers look for (1.3×-4×) are slivers.
QUARTILE_BARS = 4


def _inner(values: list[float]) -> float:
    """The largest of ``values`` once every outlier is dropped: more than OUTLIER × the next
    one, or (with `QUARTILE_BARS` values or more) × their upper quartile."""
    values = sorted(values, reverse=True)
    while len(values) > 1 and values[0] > OUTLIER * values[1]:
        values.pop(0)
    if len(values) >= QUARTILE_BARS:
        cap = OUTLIER * quantile(values, 0.75)
        values = [v for v in values if v <= cap] or values[-1:]
    return values[0]


def domain(bars: Sequence[Bar]) -> tuple[int, int]:
    """The axis as exponents of two ``(lo, hi)``: from at most 1/2 to at least 2, reaching
    every bar and whisker end except outliers (see `OUTLIER`)."""
    finite = [b for b in bars if math.isfinite(b.value)]
    ups = [max(b.value, b.high) for b in finite if max(b.value, b.high) > 1]
    downs = [1 / min(b.value, b.low) for b in finite if 0 < min(b.value, b.low) < 1]
    hi = math.ceil(math.log2(_inner(ups)) - 1e-9) if ups else 1
    lo = -math.ceil(math.log2(_inner(downs)) - 1e-9) if downs else -1
    return min(lo, -1), max(hi, 1)


@dataclass(frozen=True)
class _Axis:
    """The chart's log axis, from ``2**lo`` to ``2**hi``."""

    lo: int
    hi: int

    @property
    def span(self) -> int:
        return self.hi - self.lo

    def pct(self, value: float) -> float:
        """Where ``value`` lies on the axis, in percent of its width (clamped to the axis)."""
        exp = math.log2(value) if value > 0 else -math.inf
        return 100 * (min(max(exp, self.lo), self.hi) - self.lo) / self.span

    def cuts(self, value: float) -> bool:
        """Whether ``value`` lies beyond the axis (drawn to its edge with a break mark)."""
        return not math.isfinite(value) or not (2.0**self.lo <= value <= 2.0**self.hi)


def bar_chart(
    bars: Sequence[Bar],
    title: str,
    axis: str,
    legend: Mapping[str, str] | None = None,
) -> str:
    """Render ``bars`` as one line of HTML: a ``<figure class="bench-chart">`` holding a
    caption, a legend, one ``<li class="bench-row ...">`` per bar and the axis.

    Args:
        bars: the rows, drawn top to bottom in the order given.
        title: the caption of the chart.
        axis: label under the x axis, e.g. "speed-up of the after form (log scale)".
        legend: the texts of the legend by key (`LEGEND_KEYS`); the ``cut`` and ``unsure``
            entries are shown only when some bar is cut or unsure. ``None``: no legend.
    """
    scale = _Axis(*domain(bars))
    rows = "".join(_row(bar, scale) for bar in bars)
    ticks = "".join(
        f'<span class="bench-tick{" bench-tick--minor" if exp % 2 else ""}'
        f'{" bench-tick--one" if exp == 0 else ""}" style="left:{scale.pct(2.0**exp):.2f}%">'
        f"{escape(_tick_label(exp))}</span>"
        for exp in range(scale.lo, scale.hi + 1)
    )
    keys = _legend(legend, bars, any(scale.cuts(bar.value) for bar in bars)) if legend else ""
    return (
        f'<figure class="bench-chart{" bench-chart--dense" if scale.span > DENSE else ""}" '
        f'style="--bench-steps:{scale.span}">'
        f"<figcaption>{escape(title)}</figcaption>{keys}"
        f'<ol class="bench-rows">{rows}</ol>'
        f'<div class="bench-axis" aria-hidden="true"><span class="bench-ticks">{ticks}</span></div>'
        f'<p class="bench-axis-label">{escape(axis)}</p></figure>'
    )


def _label(bar: Bar) -> str:
    """A bar's label as HTML: linked to its tip, with its note under it."""
    label = inline_html(bar.label)
    if bar.href:
        label = f'<a href="{escape(bar.href)}">{label}</a>'
    if bar.note:
        label += f'<span class="bench-note">{inline_html(bar.note)}</span>'
    return label


def _row(bar: Bar, scale: _Axis) -> str:
    """One ``<li>`` of the chart: the label, the bar from 1 to its ratio, its interval's
    whisker, a break mark where it is cut, and the value."""
    one = scale.pct(1.0)
    finite = math.isfinite(bar.value)
    v = scale.pct(bar.value) if finite else 100.0
    left, width = min(one, v), max(abs(v - one), 0.4)
    cut = scale.cuts(bar.value)
    shown = bar.value_text or value_label(bar.value)
    tooltip = f"{plain_text(bar.label)}: {shown}"
    parts = [
        f'<span class="bench-one" style="left:{one:.2f}%"></span>',
        f'<span class="bench-bar" style="left:{left:.2f}%;width:{width:.2f}%"></span>',
    ]
    if finite and bar.high > bar.low:
        tooltip += f" ({value_label(bar.low)}–{value_label(bar.high)})"
        w0, w1 = scale.pct(bar.low), scale.pct(bar.high)
        parts.append(
            f'<span class="bench-whisker" style="left:{w0:.2f}%;width:{w1 - w0:.2f}%"></span>'
        )
    if cut:
        edge = "right" if bar.value > 1 else "left"
        parts.append(f'<span class="bench-cut bench-cut--{edge}"></span>')
    return (
        f'<li class="bench-row bench-row--{kind(bar.verdict)}{" bench-row--cut" if cut else ""}" '
        f'title="{escape(tooltip)}">'
        f'<span class="bench-label">{_label(bar)}</span>'
        f'<span class="bench-track" aria-hidden="true">{"".join(parts)}</span>'
        f'<span class="bench-value">{escape(shown)}</span></li>'
    )


def _legend(legend: Mapping[str, str], bars: Sequence[Bar], any_cut: bool) -> str:
    """The legend: an entry per key of ``legend`` in `LEGEND_KEYS` order; ``cut`` only when
    some bar is cut, ``unsure`` only when some bar is unsure."""
    unsure = any(kind(b.verdict) == "unsure" for b in bars)
    shown = {"cut": any_cut, "unsure": unsure}
    keys = "".join(
        f'<li class="bench-key bench-key--{key}">{escape(legend[key])}</li>'
        for key in LEGEND_KEYS
        if key in legend and shown.get(key, True)
    )
    return f'<ul class="bench-legend">{keys}</ul>'
