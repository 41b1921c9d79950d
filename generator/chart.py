"""A horizontal bar chart of ratios on a log scale, with interval whiskers, as inline SVG.

Rendered at build time by the site generator: no JavaScript, no chart library, nothing
fetched. Text and axes use ``currentColor`` so the chart follows the light and dark theme;
bars carry a class per verdict (``bar--good``, ``bar--bad``, ``bar--same``) for the CSS.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

#: Verdicts drawn as an improvement, a regression, or no significant difference.
GOOD = {"faster", "less-memory"}
BAD = {"slower", "more-memory"}


@dataclass(frozen=True)
class Bar:
    """One row of the chart: a ratio (above 1: the after form is better) and its interval."""

    label: str
    value: float
    low: float
    high: float
    verdict: str
    href: str | None = None


def fmt_ratio(x: float) -> str:
    """A ratio as the site shows it: ``0.52``, ``1.84``, ``12.3``, ``150``."""
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def _tick_label(x: float) -> str:
    return f"{x:g}×" if x >= 1 else f"1/{1 / x:g}"


#: The axis never spans more than 1/64× to 64×: a bar beyond is drawn to the edge (its label
#: still gives the exact value), so one huge ratio does not flatten every other bar.
MAX_EXP = 6


def _domain(bars: Sequence[Bar]) -> tuple[float, float]:
    lo = min([1.0, *(b.low for b in bars), *(b.value for b in bars)])
    hi = max([1.0, *(b.high for b in bars), *(b.value for b in bars)])
    lo_exp = math.floor(math.log2(lo) - 1e-9) if lo < 1 else -1
    hi_exp = math.ceil(math.log2(hi) + 1e-9) if hi > 1 else 1
    return 2.0 ** max(lo_exp, -MAX_EXP), 2.0 ** min(hi_exp, MAX_EXP)


def bar_chart(bars: Sequence[Bar], title: str, axis: str, width: int = 760) -> str:
    """Render ``bars`` as an SVG document (one ``<rect class="bar ...">`` per bar).

    Args:
        bars: the rows, drawn top to bottom in the order given.
        title: accessible title of the chart (``<title>``).
        axis: label under the x axis, e.g. "speed-up of the after form (log scale)".
        width: width in pixels; the height follows from the number of rows.
    """
    row, top, bottom = 22, 12, 44
    label_w = min(300, 14 + 7 * max((len(b.label) for b in bars), default=10))
    right = 64
    plot_w = width - label_w - right
    height = top + row * max(len(bars), 1) + bottom
    lo, hi = _domain(bars) if bars else (0.5, 2.0)
    span = math.log2(hi) - math.log2(lo)

    def x(value: float) -> float:
        clamped = min(max(value, lo), hi)
        return label_w + plot_w * (math.log2(clamped) - math.log2(lo)) / span

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bench-chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="100%" '
        f'font-family="sans-serif" font-size="12" aria-label={quoteattr(title)}>',
        f"<title>{escape(title)}</title>",
    ]
    axis_y = top + row * max(len(bars), 1)
    exp = round(math.log2(lo))
    while 2.0**exp <= hi * 1.0001:
        tick = 2.0**exp
        tx = x(tick)
        cls = "axis-one" if exp == 0 else "grid"
        opacity = "0.7" if exp == 0 else "0.2"
        out.append(
            f'<line class="{cls}" x1="{tx:.1f}" y1="{top - 4}" x2="{tx:.1f}" y2="{axis_y}" '
            f'stroke="currentColor" stroke-opacity="{opacity}"/>'
        )
        out.append(
            f'<text x="{tx:.1f}" y="{axis_y + 16}" text-anchor="middle" '
            f'fill="currentColor">{escape(_tick_label(tick))}</text>'
        )
        exp += 1
    out.append(
        f'<text x="{label_w + plot_w / 2:.1f}" y="{axis_y + 36}" text-anchor="middle" '
        f'fill="currentColor">{escape(axis)}</text>'
    )
    one = x(1.0)
    for i, bar in enumerate(bars):
        y = top + i * row
        mid = y + row / 2
        kind = "good" if bar.verdict in GOOD else "bad" if bar.verdict in BAD else "same"
        colour = {"good": "#2e7d32", "bad": "#c62828", "same": "#9e9e9e"}[kind]
        bx = x(bar.value)
        left, w = min(one, bx), max(abs(bx - one), 1.0)
        label = escape(bar.label)
        if bar.href:
            label = f"<a href={quoteattr(bar.href)}>{label}</a>"
        out.append(
            f'<text x="{label_w - 8}" y="{mid + 4:.1f}" text-anchor="end" '
            f'fill="currentColor">{label}</text>'
        )
        out.append(
            f'<rect class="bar bar--{kind}" x="{left:.1f}" y="{y + 4}" width="{w:.1f}" '
            f'height="{row - 8}" fill="{colour}" fill-opacity="0.75">'
            f"<title>{escape(bar.label)}: {fmt_ratio(bar.value)}× "
            f"({fmt_ratio(bar.low)}–{fmt_ratio(bar.high)})</title></rect>"
        )
        if bar.high > bar.low:
            x1, x2 = x(bar.low), x(bar.high)
            out.append(
                f'<path class="whisker" d="M{x1:.1f} {mid:.1f}H{x2:.1f}'
                f'M{x1:.1f} {mid - 5:.1f}V{mid + 5:.1f}M{x2:.1f} {mid - 5:.1f}V{mid + 5:.1f}" '
                f'stroke="currentColor" stroke-width="1.2" fill="none"/>'
            )
        value_label = f"{fmt_ratio(bar.value)}×"
        left_end = min(x(bar.low), bx) - 6
        if bar.value < 1 and left_end - 7 * len(value_label) > label_w:
            tx, anchor = left_end, "end"  # a slow-down: label on the left of its bar
        else:
            tx, anchor = max(x(bar.high), bx, one) + 6, "start"
        out.append(
            f'<text x="{tx:.1f}" y="{mid + 4:.1f}" text-anchor="{anchor}" '
            f'fill="currentColor">{value_label}</text>'
        )
    out.append("</svg>")
    return "".join(out)
