"""The HTML report: one self-contained file (inline CSS and SVG, no script, no CDN) with the
step time breakdown as a chart, the findings, and the per-step figures."""

from __future__ import annotations

from typing import Any

from generator.doctor import units
from generator.doctor.model import PHASES

#: A colour per phase, readable in light and dark print.
COLOURS = {
    "data": "#e4572e",
    "forward": "#17bebb",
    "backward": "#2e86ab",
    "optimizer": "#ffc914",
    "other": "#a0a0a0",
}
WIDTH, HEIGHT, LEFT, BOTTOM = 640, 220, 56, 24


def chart(report: dict[str, Any]) -> dict[str, Any]:
    """The per-step stacked bars (SVG coordinates) and the axis of the step-time chart."""
    steps = report["per_step"]
    top = max((s["seconds"] for s in steps), default=0.0) or 1.0
    plot_w, plot_h = WIDTH - LEFT - 8, HEIGHT - BOTTOM - 8
    slot = plot_w / max(len(steps), 1)
    bars = []
    for i, step in enumerate(steps):
        y = 8 + plot_h
        x = LEFT + i * slot + slot * 0.15
        for phase in PHASES:
            h = step[phase] / top * plot_h
            if h <= 0:
                continue
            y -= h
            bars.append(
                {
                    "x": round(x, 1),
                    "y": round(y, 1),
                    "w": round(slot * 0.7, 1),
                    "h": round(h, 2),
                    "fill": COLOURS[phase],
                    "title": f"{i + 1}: {phase} {units.seconds(step[phase])}",
                }
            )
    ticks = [
        {"y": round(8 + plot_h - f * plot_h, 1), "label": units.seconds(top * f) if f else "0"}
        for f in (0.0, 0.5, 1.0)
    ]
    labels = [
        {"x": round(LEFT + (i + 0.5) * slot, 1), "label": str(i + 1)} for i in range(len(steps))
    ]
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "base": 8 + plot_h,
        "bars": bars,
        "ticks": ticks,
        "labels": labels,
    }


def mean_bar(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The mean step as one bar of phases: each with its width in percent."""
    total = sum(report["breakdown"].values()) or 1.0
    return [
        {
            "phase": phase,
            "seconds": units.seconds(value),
            "share": units.share(value / total),
            "pct": round(value / total * 100, 2),
            "fill": COLOURS[phase],
        }
        for phase, value in report["breakdown"].items()
    ]


def to_html(report: dict[str, Any], L: dict[str, str], lang: str) -> str:
    """The report as one HTML file."""
    from generator.records.render import render

    return render(
        "doctor/report.html.j2",
        r=report,
        L=L,
        lang=lang,
        chart=chart(report),
        mean=mean_bar(report),
        units=units,
    )
