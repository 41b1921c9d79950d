"""What each composer flag bought, as measured: the tables on the composer page.

``benchmarks/compose_compare.py`` trains the composed script on one device with flags added
one at a time, and a minimal hand-written loop and Lightning's ``Trainer`` with the same
settings, and writes ``benchmarks/results/compose-<device>.json``. A Markdown line
``<!-- compose-results: DEVICE [LANG] -->`` in ``docs/composer*.md`` becomes that file's
tables (`expand_results`), or a line saying how to produce it while it does not exist.
``benchmarks/compose_gpt.py`` does the same for ``--model gpt`` against a minimal GPT loop:
``<!-- compose-gpt-results: DEVICE [LANG] -->`` becomes its line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from generator.records import ui

#: ``<!-- compose-results: cuda -->`` or ``<!-- compose-results: cpu zh -->``.
RESULTS_PLACEHOLDER = re.compile(
    r"^<!-- compose-results: *(?P<device>cpu|cuda)(?: +(?P<lang>en|zh))? *-->$", re.M
)

#: ``<!-- compose-gpt-results: cpu -->`` or ``<!-- compose-gpt-results: cuda zh -->``.
GPT_RESULTS_PLACEHOLDER = re.compile(
    r"^<!-- compose-gpt-results: *(?P<device>cpu|cuda)(?: +(?P<lang>en|zh))? *-->$", re.M
)

#: What produces the figures of each device.
COMMANDS = {
    "cpu": "python benchmarks/compose_compare.py --device cpu",
    "cuda": "python benchmarks/compose_compare.py --device cuda",
}
GPT_COMMANDS = {
    "cpu": "python benchmarks/compose_gpt.py",
    "cuda": 'python benchmarks/compose_gpt.py --device cuda --flags "--compile --fused-optimizer"',
}


def results_path(device: str, folder: Path | None = None) -> Path:
    """Where ``benchmarks/compose_compare.py`` writes the figures of ``device``."""
    if folder is None:
        from generator import paths

        folder = paths.ROOT / "benchmarks" / "results"
    return folder / f"compose-{device}.json"


def results_markdown(device: str, lang: str = "en", folder: Path | None = None) -> str:
    """The tables for ``device`` in ``lang``, or a line saying how to measure them.

    A file that cannot be read, or lacks the figures, counts as not measured.
    """
    L = ui.labels()[lang]
    path = results_path(device, folder)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return _tables(data, L)
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
        file = f"benchmarks/results/{path.name}"
        return L["composer_not_yet"].format(
            device=device.upper(), command=COMMANDS[device], file=file
        )


def gpt_results_markdown(device: str, lang: str = "en", folder: Path | None = None) -> str:
    """The GPT benchmark's line for ``device`` in ``lang``, or how to measure it."""
    L = ui.labels()[lang]
    path = results_path(device, folder).with_name(f"compose-gpt-{device}.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        mfu = "" if data.get("mfu") is None else L["composer_gpt_mfu"].format(mfu=data["mfu"])
        return L["composer_gpt_measured"].format(
            name=data["gpu"] or data["cpu"],
            torch=data["torch"],
            date=str(data["date"])[:10],
            unit=L["composer_tokens_" + device],
            generated=float(data["generated_tokens_per_s"]),
            minimal=float(data["minimal_tokens_per_s"]),
            ratio=float(data["ratio"]),
            mfu=mfu,
            command=data["command"],
        )
    except (OSError, ValueError, KeyError, TypeError):
        file = f"benchmarks/results/{path.name}"
        return L["composer_not_yet"].format(
            device=device.upper(), command=GPT_COMMANDS[device], file=file
        )


def expand_results(markdown: str, folder: Path | None = None) -> str:
    """Replace each `RESULTS_PLACEHOLDER` line with `results_markdown`, and each
    `GPT_RESULTS_PLACEHOLDER` line with `gpt_results_markdown`."""

    def table(match: re.Match[str]) -> str:
        return results_markdown(match["device"], match["lang"] or "en", folder)

    def line(match: re.Match[str]) -> str:
        return gpt_results_markdown(match["device"], match["lang"] or "en", folder)

    markdown = RESULTS_PLACEHOLDER.sub(table, markdown)
    return GPT_RESULTS_PLACEHOLDER.sub(line, markdown)


def _num(value: Any, spec: str) -> str:
    return "–" if value is None else format(float(value), spec)


def _tables(data: Mapping[str, Any], L: Mapping[str, str]) -> str:
    w = data["workload"]
    device = "cuda" if data["device"] == "cuda" else "cpu"
    samples = L["composer_samples_" + device]
    header = (
        L["composer_added"],
        samples,
        L["composer_vs_plain"],
        L["composer_tflops"],
        L["composer_mfu"],
    )
    out = [
        L["composer_measured_on"].format(
            name=data["device_name"],
            torch=data["torch"],
            lightning=data.get("lightning") or "–",
            date=str(data["date"])[:10],
        ),
        L["composer_workload"].format(
            width=w["width"],
            image_size=w["image_size"],
            batch_size=w["batch_size"],
            gflop=float(w["gflop_per_sample"]),
            steps=data["steps"],
            warmup=data["warmup"],
            repeats=data["repeats"],
            measure=L["composer_measure_" + device].format(threads=data.get("threads") or 1),
        ),
        "",
        L["composer_ladder_title"],
        "",
        "| " + " | ".join(header) + " |",
        "|---|--:|--:|--:|--:|",
    ]
    for row in data["ladder"]:
        added = " ".join(f"`{f}`" for f in row["added"]) or L["composer_plain"]
        mfu = "–" if row.get("mfu") is None else f"{float(row['mfu']):.0%}"
        out.append(
            f"| {added} | {float(row['samples_per_s']):,.0f} | {_num(row['speedup'], '.2f')}× "
            f"| {_num(row.get('tflops'), '.3g')} | {mfu} |"
        )
    comparison = data["comparison"]
    out += ["", L["composer_compare_title"], ""]
    columns = " | ".join(
        " ".join(f"`{f}`" for f in c["flags"]) or L["composer_plain"] for c in comparison
    )
    loop = L["composer_loop"].format(unit=samples)
    out += [f"| {loop} | {columns} |", "|---|" + "--:|" * len(comparison)]
    for key in ("generated", "minimal", "lightning"):
        cells = " | ".join(_num(c.get(key), ",.0f") for c in comparison)
        label = L["composer_" + key]
        out.append(f"| {label} | {cells} |")
    for key in ("vs_minimal", "vs_lightning"):
        cells = " | ".join(_num(c.get(key), ".3f") for c in comparison)
        label = L["composer_" + key]
        out.append(f"| {label} | {cells} |")
    out += ["", L["composer_command"].format(command=data["command"])]
    return "\n".join(out)
