"""Plain-text rendering of a tip for ``python -m generator show``."""

from __future__ import annotations

from generator.render import render
from generator.schema import Tip
from generator.taxonomy import CATEGORIES, COMPOSE_FEATURES

LABELS = {
    "en": {
        "category": "Category",
        "impact": "Impact",
        "devices": "Devices",
        "min_cc": "Minimum compute capability",
        "min_torch": "Minimum torch",
        "compose": "In a generated script",
        "why": "Why",
        "hardware": "Hardware",
        "caveats": "Caveats",
        "before": "Before",
        "after": "After",
        "no_code": "No code",
        "sources": "Sources",
    },
    "zh": {
        "category": "分类",
        "impact": "收益",
        "devices": "设备",
        "min_cc": "最低计算能力",
        "min_torch": "最低 torch 版本",
        "compose": "生成训练脚本时",
        "why": "原理",
        "hardware": "硬件",
        "caveats": "注意事项",
        "before": "改进前",
        "after": "改进后",
        "no_code": "无代码",
        "sources": "来源",
    },
}


def render_tip(tip: Tip, lang: str = "en") -> str:
    """The tip as readable terminal text in ``lang``."""
    flag = COMPOSE_FEATURES.get(tip.compose) if tip.compose else None
    return render(
        "show.txt.j2",
        tip=tip,
        lang=lang,
        labels=LABELS,
        categories=CATEGORIES,
        flag=flag,
        snippet_dir=f"snippets/{tip.id}",
    )
