"""What each composer flag bought, as measured: the tables on the composer page.

``benchmarks/compose_compare.py`` trains the composed script on one device with flags added
one at a time, and a minimal hand-written loop and Lightning's ``Trainer`` with the same
settings, and writes ``benchmarks/results/compose-<device>.json``. A Markdown line
``<!-- compose-results: DEVICE [LANG] -->`` in ``docs/composer*.md`` becomes that file's
tables (:func:`expand_results`), or a line saying how to produce it while it does not exist.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: ``<!-- compose-results: cuda -->`` or ``<!-- compose-results: cpu zh -->``.
RESULTS_PLACEHOLDER = re.compile(
    r"^<!-- compose-results: *(?P<device>cpu|cuda)(?: +(?P<lang>en|zh))? *-->$", re.M
)

#: The strings the tables show, per language (the same keys in each).
LABELS: dict[str, dict[str, str]] = {
    "en": {
        "not_yet": "Not measured on {device} yet: `{command}` writes `{file}`.",
        "measured_on": "Measured on **{name}**, torch {torch}, Lightning {lightning}, {date}.",
        "workload": "Workload: conv net of width {width} on {image_size}×{image_size} images, "
        "batch {batch_size}, {gflop:.3g} GFLOP a sample (forward and backward); "
        "{steps} steps measured after {warmup}, median of {repeats} run(s); {measure}.",
        "ladder_title": "What each flag bought (the generated script, flags added in turn):",
        "flags": "Flags",
        "added": "Added",
        "samples_cuda": "samples/s",
        "samples_cpu": "samples/CPU-s",
        "measure_cuda": "samples per second of wall time, each interval ending in a sync",
        "measure_cpu": "samples per CPU-second, with {threads} thread(s), which other load on "
        "the machine skews far less than wall time",
        "vs_plain": "× plain",
        "tflops": "TFLOP/s",
        "mfu": "MFU",
        "plain": "none (plain script)",
        "compare_title": "Against the alternatives, with the same model, data and optimizer "
        "settings:",
        "loop": "Loop ({unit})",
        "generated": "Generated `train.py`",
        "minimal": "Minimal hand-written loop",
        "lightning": "Lightning `Trainer`",
        "vs_minimal": "Generated ÷ minimal",
        "vs_lightning": "Generated ÷ Lightning",
        "command": "Produced by `{command}`.",
    },
    "zh": {
        "not_yet": "尚未在 {device} 上测量：运行 `{command}` 会写入 `{file}`。",
        "measured_on": "测量环境：**{name}**，torch {torch}，Lightning {lightning}，{date}。",
        "workload": "工作负载：宽度 {width} 的卷积网络，{image_size}×{image_size} 图像，"
        "批大小 {batch_size}，每个样本 {gflop:.3g} GFLOP（前向加反向）；预热 {warmup} 步后"
        "测量 {steps} 步，取 {repeats} 次运行的中位数；度量方式：{measure}。",
        "ladder_title": "每个参数带来的提升（生成的脚本，依次加入参数）：",
        "flags": "参数",
        "added": "新加入",
        "samples_cuda": "样本/秒",
        "samples_cpu": "样本/CPU 秒",
        "measure_cuda": "按墙钟时间计算的每秒样本数，每个计时区间都以一次同步结束",
        "measure_cpu": "每 CPU 秒的样本数（{threads} 个线程），机器上的其他负载对它的影响远小于对墙钟时间的影响",
        "vs_plain": "相对基础脚本",
        "tflops": "TFLOP/s",
        "mfu": "MFU",
        "plain": "无（基础脚本）",
        "compare_title": "与其他写法对比（相同的模型、数据和优化器设置）：",
        "loop": "训练循环（{unit}）",
        "generated": "生成的 `train.py`",
        "minimal": "手写的最简训练循环",
        "lightning": "Lightning `Trainer`",
        "vs_minimal": "生成脚本 ÷ 最简循环",
        "vs_lightning": "生成脚本 ÷ Lightning",
        "command": "由 `{command}` 生成。",
    },
}

#: What produces the figures of each device.
COMMANDS = {
    "cpu": "python benchmarks/compose_compare.py --device cpu",
    "cuda": "python benchmarks/compose_compare.py --device cuda",
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
    L = LABELS[lang]  # noqa: N806
    path = results_path(device, folder)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return _tables(data, L)
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
        file = f"benchmarks/results/{path.name}"
        return L["not_yet"].format(device=device.upper(), command=COMMANDS[device], file=file)


def expand_results(markdown: str, folder: Path | None = None) -> str:
    """Replace each :data:`RESULTS_PLACEHOLDER` line with :func:`results_markdown`."""

    def table(match: re.Match[str]) -> str:
        return results_markdown(match["device"], match["lang"] or "en", folder)

    return RESULTS_PLACEHOLDER.sub(table, markdown)


def _num(value: Any, spec: str) -> str:
    return "–" if value is None else format(float(value), spec)


def _tables(data: Mapping[str, Any], L: Mapping[str, str]) -> str:  # noqa: N803
    w = data["workload"]
    device = "cuda" if data["device"] == "cuda" else "cpu"
    samples = L[f"samples_{device}"]
    out = [
        L["measured_on"].format(
            name=data["device_name"],
            torch=data["torch"],
            lightning=data.get("lightning") or "–",
            date=str(data["date"])[:10],
        ),
        L["workload"].format(
            width=w["width"],
            image_size=w["image_size"],
            batch_size=w["batch_size"],
            gflop=float(w["gflop_per_sample"]),
            steps=data["steps"],
            warmup=data["warmup"],
            repeats=data["repeats"],
            measure=L[f"measure_{device}"].format(threads=data.get("threads") or 1),
        ),
        "",
        L["ladder_title"],
        "",
        f"| {L['added']} | {samples} | {L['vs_plain']} | {L['tflops']} | {L['mfu']} |",
        "|---|--:|--:|--:|--:|",
    ]
    for row in data["ladder"]:
        added = " ".join(f"`{f}`" for f in row["added"]) or L["plain"]
        mfu = "–" if row.get("mfu") is None else f"{float(row['mfu']):.0%}"
        out.append(
            f"| {added} | {float(row['samples_per_s']):,.0f} | {_num(row['speedup'], '.2f')}× "
            f"| {_num(row.get('tflops'), '.3g')} | {mfu} |"
        )
    comparison = data["comparison"]
    out += ["", L["compare_title"], ""]
    header = " | ".join(" ".join(f"`{f}`" for f in c["flags"]) or L["plain"] for c in comparison)
    loop = L["loop"].format(unit=samples)
    out += [f"| {loop} | {header} |", "|---|" + "--:|" * len(comparison)]
    for key in ("generated", "minimal", "lightning"):
        cells = " | ".join(_num(c.get(key), ",.0f") for c in comparison)
        out.append(f"| {L[key]} | {cells} |")
    for key in ("vs_minimal", "vs_lightning"):
        cells = " | ".join(_num(c.get(key), ".3f") for c in comparison)
        out.append(f"| {L[key]} | {cells} |")
    out += ["", L["command"].format(command=data["command"])]
    return "\n".join(out)
