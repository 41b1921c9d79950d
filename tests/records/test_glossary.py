"""The Chinese glossary: one term per concept, enforced on every Chinese text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator import paths
from generator.records.coverage import load_coverage
from generator.records.glossary import find_variants, load_glossary, page_markdown, prose
from generator.records.load import load_tips, validate
from generator.records.taxonomy import CATEGORIES, DEVICES, IMPACTS, TAGS
from generator.records.ui import labels
from tests.helpers import example_record, write_record


def test_the_glossary_names_the_terms_the_style_guide_requires() -> None:
    glossary = load_glossary()
    terms = {t.zh: t for t in glossary.terms}
    for required in ("显存", "混合精度", "梯度累积", "微批次", "分布式数据并行", "矩估计"):
        assert required in terms, required
    assert "小批次" in terms["微批次"].avoid
    assert "一阶动量" in terms["矩估计"].avoid
    # No term is another term's variant, and no variant is listed twice.
    variants = [v for t in glossary.terms for v in t.avoid]
    assert len(variants) == len(set(variants))
    assert not set(variants) & set(terms)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("每个小批次的损失", ["小批次"]),
        ("Adam 的一阶动量和二阶动量", ["一阶动量", "二阶动量"]),
        ("切到 eval 模式再评估", ["eval 模式"]),
        ("注册一个 forward hook", ["hook"]),
        ("先做 warm-up 再训练", ["warm-up"]),
        ("把 batch 切成微批次", ["batch"]),
        ("BatchNorm 层的 running 统计量", ["running"]),
        # Code is not prose: identifiers in backticks and fenced blocks are left alone.
        ("用 `batch_size` 和 `register_forward_hook`", []),
        ("```python\nfor batch in loader:\n    pass\n```\n每个批次", []),
        ("BatchNorm 和 hooks_dict 不算", []),
        ("每个微批次的损失", []),
        ("N 个微批次（micro-batch）做一次更新", []),  # the term, glossed in English
    ],
)
def test_variants_are_found_in_prose_only(text: str, found: list[str]) -> None:
    assert [v for v, _ in find_variants(text)] == found


def test_prose_drops_code() -> None:
    assert "batch" not in prose("a `batch` and ```\nbatch\n``` end")


def test_validate_reports_a_variant_with_file_line_and_field(tmp_path: Path) -> None:
    data = example_record()
    data["summary"]["zh"] = "每个小批次都清零梯度，省显存。"
    path = write_record(tmp_path, "uses-variant.yaml", data)
    _, problems = validate([path])
    (problem,) = problems
    assert problem.field == "summary.zh"
    assert "'小批次'" in problem.reason and "'微批次'" in problem.reason
    line = path.read_text(encoding="utf-8").splitlines()[problem.line - 1]
    assert "小批次" in line


def test_every_chinese_text_uses_the_glossary_terms() -> None:
    """Records (via validate), vocabulary labels and the hand-written Chinese pages."""
    load_tips()  # raises on any record using a variant
    labels = [lab.zh for vocab in (CATEGORIES, DEVICES, IMPACTS, TAGS) for lab in vocab.values()]
    bad = {zh: find_variants(zh) for zh in labels if find_variants(zh)}
    assert not bad, bad
    # Hand-written pages only: generated ones say so on their first lines, and their Chinese
    # comes from the records (checked above) or, for the glossary page, lists the variants.
    pages = {p.name: p.read_text(encoding="utf-8") for p in paths.DOCS.glob("*.zh.md")}
    texts = {k: v for k, v in pages.items() if "do not edit by hand" not in v[:400]}
    assert "index.zh.md" in texts
    texts |= {f"ui.yaml:{key}": text for key, text in labels_zh().items()}
    coverage = load_coverage()
    texts |= {f"_coverage.yaml:{row.topic}": row.topic_zh for row in coverage.all_rows()}
    texts |= {f"_coverage.yaml:{name}": zh for name, zh in coverage.section_names.items()}
    bad = {name: find_variants(text) for name, text in texts.items() if find_variants(text)}
    assert not bad, bad


def test_the_glossary_page_lists_every_term_in_both_languages() -> None:
    glossary = load_glossary()
    en, zh = page_markdown("en"), page_markdown("zh")
    assert en.startswith('---\ntitle: "Chinese glossary"')
    assert "# 中文术语表" in zh
    for term in glossary.terms:
        assert f"**{term.zh}**" in en and f"**{term.zh}**" in zh


def labels_zh() -> dict[str, str]:
    """The Chinese UI labels, without their ``{placeholder}`` names (code, not prose)."""
    return {k: re.sub(r"\{[a-z_]*(?::[^}]*)?\}", "", v) for k, v in labels()["zh"].items()}
