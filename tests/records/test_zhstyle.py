"""The Chinese style rules beyond the glossary (倍, calques), as `validate` enforces them."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.records.load import validate
from generator.records.zhstyle import allow_problems, style_problems
from tests.helpers import example_record, write_record


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        # An increase verb right before the multiple reads as N+1 times.
        ("吞吐量提升 2 倍。", "提升 2 倍"),
        ("训练速度提高了约 3 倍。", "提高了约 3 倍"),
        ("端到端最多快 1.5 倍。", "快 1.5 倍"),
        ("16 位训练快 3–8 倍", "快 3–8 倍"),
        ("参数量增加 E 倍。", "增加 E 倍"),
        ("整条曲线加快 N 倍。", "加快 N 倍"),
        ("Tensor Core 快好几倍。", "快好几倍"),
        ("比填充方式快 1.6 倍以上。", "快 1.6 倍"),
        ("合并后的批次大了 V 倍。", "大了 V 倍"),
        # 倍 for a decrease, right after its verb or later in the clause.
        ("显存减少 4 倍。", "减少 4 倍"),
        ("延迟降低 10 倍。", "降低 10 倍"),
        ("耗时缩短 3 倍。", "缩短 3 倍"),
        ("一开始小了八倍。", "小了八倍"),
        ("停顿从 148.8 秒降到 6.3 秒（23.6 倍）。", "降到 6.3 秒（23.6 倍"),
        # A wrapped line reads as the page renders it.
        ("吞吐量提\n  升 2 倍。", "提升 2 倍"),
        # The calque.
        ("在任何设备上都一样；真正要紧的是 GPU。", "真正要紧的是"),
    ],
)
def test_each_refused_form_is_found(text: str, phrase: str) -> None:
    assert [p.phrase for p in style_problems(text)] == [phrase]


@pytest.mark.parametrize(
    "text",
    [
        "吞吐量提高到 2 倍。",
        "吞吐量是原来的 2 倍。",
        "加速比 1.34–1.43。",
        "耗时降为原来的 1/4。",
        "把保存频率提高到 10 倍或降到十分之一。",
        "大约 2 倍的显存。",
        "最多达到 bf16 的 1.5 倍。",
        "批次翻倍，步数减半。",
        "维度取 8 的倍数。",
        "调度进度就会变成 N 倍速。",
        "学习率放大了 N 倍。",  # 放大 N 倍 reads as ×N
        "至少 2 倍。",
        "`提升 2 倍` 在代码里不算。",
    ],
)
def test_unambiguous_multiples_pass(text: str) -> None:
    assert style_problems(text) == []


def test_validate_names_file_line_and_field_and_the_quoted_source_escape(tmp_path: Path) -> None:
    data = example_record()
    data["caveats"] = [
        {
            "en": "Older guides quote “3x faster”.\nIt is\n4x slower.",
            "zh": "较早的教程说“训练快 3 倍”。\n实际上\n耗时减少 4 倍。",
        }
    ]
    path = write_record(tmp_path, "bei.yaml", data)
    _, problems = validate([path])
    assert [(p.field, p.reason.split(":")[0]) for p in problems] == [
        ("caveats[0].zh", "'快 3 倍'"),
        ("caveats[0].zh", "'减少 4 倍'"),
    ]
    lines = path.read_text(encoding="utf-8").splitlines()
    assert "快 3 倍" in lines[problems[0].line - 1]
    assert "减少 4 倍" in lines[problems[1].line - 1]
    assert "原来的 1/N" in problems[1].reason
    # A source's own words, quoted, may keep their form: `allow` names them.
    data["caveats"][0]["zh"] = "较早的教程说“训练快 3 倍”。\n实际耗时降为原来的 1/4。"
    data["caveats"][0]["allow"] = ["训练快 3 倍"]
    _, problems = validate([write_record(tmp_path, "quoted.yaml", data)])
    assert problems == []


@pytest.mark.parametrize(
    ("zh", "allow", "why"),
    [
        ("训练快 3 倍。", "训练快 3 倍", "must be quoted"),  # not a quotation
        ("教程说“训练更快”。", "训练快 3 倍", "is not in the Chinese text"),  # stale
        ("教程说“吞吐量是原来的 3 倍”。", "是原来的 3 倍", "breaks no style rule"),
    ],
)
def test_an_allow_phrase_must_be_a_quoted_offending_phrase(zh: str, allow: str, why: str) -> None:
    (problem,) = allow_problems(zh, [allow])
    assert why in problem


def test_every_chinese_text_outside_the_records_keeps_the_style_rules() -> None:
    """The records and entry points are `validate`'s; here: the UI labels, the hand-written
    Chinese pages, the coverage table, the lint rules' texts and the composer's flag tables."""
    import re

    from generator import paths
    from generator.compose.docs import flags_table
    from generator.lint.rules import RULES
    from generator.records.coverage import load_coverage
    from generator.records.ui import labels

    texts = {f"ui.yaml:{key}": text for key, text in labels()["zh"].items()}
    for page in paths.DOCS.glob("*.zh.md"):
        text = page.read_text(encoding="utf-8")
        if "do not edit by hand" not in text[:400]:
            texts[page.name] = text
    assert "index.zh.md" in texts and "contributing.zh.md" in texts
    coverage = load_coverage()
    texts |= {f"_coverage.yaml:{row.topic}": row.topic_zh for row in coverage.all_rows()}
    for rule in RULES:
        texts |= {f"{rule.code}.{k}": getattr(rule, k) for k in ("message_zh", "why_zh")}
    texts |= {f"flags:{model}": flags_table(model, "zh") for model in ("convnet", "gpt")}
    # A label's {placeholder} stands for a number: 内存减少 {ratio}× is a decrease by a multiple.
    texts = {k: re.sub(r"\{[a-z_]*(?::[^}]*)?\}", "N", v) for k, v in texts.items() if v}
    bad = {name: [p.phrase for p in style_problems(t)] for name, t in texts.items()}
    assert not {k: v for k, v in bad.items() if v}
