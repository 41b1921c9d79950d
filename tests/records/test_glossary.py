"""The Chinese glossary: one term per concept, enforced on every Chinese text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator import paths
from generator.errors import InvalidRecords
from generator.records.coverage import load_coverage
from generator.records.glossary import (
    find_variants,
    first_use_problems,
    load_glossary,
    page_markdown,
    paragraphs,
    prose,
)
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
    # The terms that drifted between files (zh review of 2026-11-24), each with what it avoids.
    drifted = {
        "kernel": "内核",
        "自动求导": "autograd",
        "集合通信": "集合操作",
        "分片": "切分",
        "CUDA 流": "stream",
        "填充": "padding",
        "缓冲区": "buffer",
        "步长": "stride",
        "worker": "工作进程",
        "Tensor Core": "张量核心",
        "block": "残差块",
        "任务": "作业",
        "完全分片数据并行": "全分片数据并行",
        "吞吐量": "吞吐",
        "融合优化器": "fused 优化器",
        "CUDA 事件": "CUDA event",
        "NVIDIA": "英伟达",
        "图中断": "断裂",
    }
    # ... and those of the 2026-11-28 review (G1-G20).
    drifted |= {
        "等效批大小": "实际批大小",
        "激活显存": "激活内存",
        "guard": "守卫",
        "改进前/改进后": "before",
        "偏置": "bias",
        "CPU-GPU 同步": "主机同步",
        "输出层": "输出头",
        "混合分片数据并行": "混合切片数据并行",
        "混合专家": "专家混合",
        "标签平滑": "label smoothing",
        "得分": "注意力分数",
        "bucket": "桶",
        "8 位/4 位": "8-bit",
        "文档字符串": "docstring",
        "归约": "规约",
        "块 GPU": "张 GPU",
    }
    for term, variant in drifted.items():
        assert variant in terms[term].avoid, (term, variant)
    assert terms["world size"].gloss == "world size（进程总数）"
    assert terms["更新幅度"].confusable.word == "步长"
    assert terms["DeviceMesh"].confusable.word == "网格"
    assert "在途" in terms and "专家并行" in terms
    assert "显存/内存" in terms  # the device-neutral label
    assert terms["激活重计算"].gloss == "激活重计算（activation checkpointing，又称梯度检查点）"
    assert terms["激活重计算"].confusable.word == "检查点"
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
        ("用 autograd 求梯度", ["autograd"]),
        ("调用 `torch.autograd.grad` 求梯度", []),
        ("每次集合操作之前", ["集合操作"]),
        ("把参数切分到各个 rank", ["切分"]),
        # The terms of the 2026-11-28 review.
        ("实际批大小是微批次 × 累积步数", ["实际批大小"]),
        ("编译图保留的激活内存减半", ["激活内存"]),
        ("Dynamo 对学习率设置了守卫", ["守卫"]),
        ("*before* 脚本每步都同步", ["before"]),
        ("卷积的 bias 会被减掉", ["bias"]),
        ("用 `bias=False` 去掉偏置", []),
        ("每步一次主机同步", ["主机同步"]),
        ("学习率的网格搜索", []),
        ("词嵌入和输出头共享权重", ["输出头"]),
        ("把最大的注意力分数记进日志", ["注意力分数"]),
        ("每个桶的长度相近", ["桶"]),
        ("按长度分桶，每个长度桶一个批次", []),
        ("第三方库的 8-bit 优化器", ["8-bit"]),
        ("DDP 的 docstring 这样说明", ["docstring"]),
        ("做一次规约", ["规约"]),
        ("模型大到一张 GPU 放不下", ["张 GPU"]),
        ("不支持 label smoothing", ["label smoothing"]),
        ("不支持标签平滑（label smoothing）", []),  # the term, glossed in English
    ],
)
def test_variants_are_found_in_prose_only(text: str, found: list[str]) -> None:
    assert [v for v, _ in find_variants(text)] == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # A variant inside its own term is none: 吞吐 is refused, 吞吐量 is the term.
        ("吞吐量翻倍", []),
        ("提高吞吐", ["吞吐"]),
        # 内核 is the operating-system kernel only, in a phrase of `allow`.
        ("注意力内核", ["内核"]),
        ("Linux 内核太旧就会失败", []),
        ("Linux 内核太旧，变长内核也不行", ["内核"]),
        # 作业 is right in a paragraph that names SLURM (`allow_near`), and only there.
        ("SLURM 抢占作业时发送 SIGTERM", []),
        ("用 `sbatch` 提交的作业", []),  # code counts as the paragraph's context
        ("否则作业会卡死", ["作业"]),
        ("SLURM 会发送 SIGTERM。\n\n否则作业会卡死", ["作业"]),  # another paragraph
    ],
)
def test_allowed_phrases_and_contexts(text: str, found: list[str]) -> None:
    assert [v for v, _ in find_variants(text)] == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # Bare 检查点 in a paragraph about recomputation means activation checkpointing: refused.
        ("每个 block 都加上检查点，反向传播时重新计算", [("检查点", "激活重计算")]),
        ("被检查点包住的前向会运行两次，重算时", [("检查点", "激活重计算")]),
        ("用 `torch.utils.checkpoint.checkpoint` 给每层加检查点", [("检查点", "激活重计算")]),
        # The same word as saved training state, and the glossed or named forms, are fine.
        ("每个 epoch 保存一次检查点", []),
        ("保存检查点时不必关心激活重计算（activation checkpointing，又称梯度检查点）", []),
        ("开启激活重计算后，重新计算的前向不会写进检查点文件", []),
        ("先做激活重计算。\n\n每个 epoch 结束时写一个检查点", []),  # another paragraph
        # 梯度检查点 is a variant of its own, outside the gloss.
        ("用梯度检查点省显存", [("梯度检查点", "激活重计算")]),
    ],
)
def test_bare_checkpoint_is_refused_for_activation_checkpointing(
    text: str, found: list[tuple[str, str]]
) -> None:
    assert find_variants(text) == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # 步长 is a stride: next to a learning rate or an optimizer it is an update's size.
        ("SGD 每步的步长只剩 1/8", [("步长", "更新幅度")]),
        ("Muon 的步长按矩阵由 `adjust_lr_fn` 缩放", [("步长", "更新幅度")]),
        ("`transpose` 只是交换步长", []),
        ("学习率不变。\n\n`permute` 只交换步长", []),  # another paragraph
        # 网格 next to sharding is a DeviceMesh; a search grid keeps its name.
        ("对 HSDP，在二维网格上使用 `no_sync`", [("网格", "DeviceMesh")]),
        ("在学习率网格上搜索", []),
    ],
)
def test_step_size_is_not_a_stride_nor_a_mesh_a_grid(
    text: str, found: list[tuple[str, str]]
) -> None:
    assert find_variants(text) == found


def test_a_gloss_must_start_with_its_term(tmp_path: Path) -> None:
    text = paths.TIPS.joinpath("_glossary.yaml").read_text(encoding="utf-8")
    bad = text.replace("gloss: 激活重计算（", "gloss: 重计算（", 1)
    assert bad != text
    (tmp_path / "_glossary.yaml").write_text(bad, encoding="utf-8")
    with pytest.raises(InvalidRecords) as err:
        load_glossary(tmp_path / "_glossary.yaml")
    (problem,) = err.value.problems
    assert "gloss" in problem.field and "激活重计算" in problem.reason


def test_paragraphs_keep_code_whole() -> None:
    text = "甲 `a`\n\n乙\n```python\nx = 1\n\ny = 2\n```\n丙"
    assert [raw for _, raw in paragraphs(text)] == [
        "甲 `a`",
        "乙\n```python\nx = 1\n\ny = 2\n```\n丙",
    ]
    assert [plain for plain, _ in paragraphs(text)] == ["甲  ", "乙\n \n丙"]


def test_the_first_use_of_a_glossed_term_carries_the_gloss() -> None:
    gloss = "激活重计算（activation checkpointing，又称梯度检查点）"
    texts = [(("summary", "zh"), "省显存。"), (("rationale", "zh"), "激活重计算让显存减半。")]
    assert first_use_problems(texts) == [(("rationale", "zh"), "激活重计算", gloss)]
    texts[1] = (("rationale", "zh"), f"{gloss}让显存减半；激活重计算……")
    assert first_use_problems(texts) == []
    # Only the first use: a later bare one is fine, an earlier bare one is not.
    texts.append((("caveats", 0, "zh"), "完整的激活重计算更省。"))
    assert first_use_problems(texts) == []
    texts.insert(0, (("summary", "zh"), "选择性激活重计算"))
    assert first_use_problems(texts) == [(("summary", "zh"), "激活重计算", gloss)]


def test_validate_reports_a_bare_first_use_and_a_bare_checkpoint(tmp_path: Path) -> None:
    data = example_record()
    data["summary"]["zh"] = "激活重计算省显存。"
    data["caveats"] = [{"en": "Recomputed.", "zh": "被检查点包住的前向在反向传播时重新计算。"}]
    path = write_record(tmp_path, "bare-terms.yaml", data)
    _, problems = validate([path])
    reasons = {p.field: p.reason for p in problems}
    assert "without its gloss" in reasons["summary.zh"]
    assert "'检查点'" in reasons["caveats[0].zh"] and "'激活重计算'" in reasons["caveats[0].zh"]
    data["summary"]["zh"] = "激活重计算（activation checkpointing，又称梯度检查点）省显存。"
    data["caveats"][0]["zh"] = "激活重计算包住的前向在反向传播时重新计算。"
    _, problems = validate([write_record(tmp_path, "glossed.yaml", data)])
    assert problems == []


def test_prose_drops_code() -> None:
    assert "batch" not in prose("a `batch` and ```\nbatch\n``` end")
    # Inline code may wrap onto the next line; a blank line ends it.
    assert prose("用 `python -m x\n  --flag y`。在 GPU 上") == "用  。在 GPU 上"
    assert prose("一个 ` 号\n\n另一段 ` 号") == "一个 ` 号\n\n另一段 ` 号"


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


def test_a_variant_on_a_later_line_of_a_text_is_reported_at_that_line(tmp_path: Path) -> None:
    data = example_record()
    data["rationale"]["zh"] = "第一行没有问题。\n第二行也没有。\n第三行说小批次。\n"
    path = write_record(tmp_path, "late-variant.yaml", data)
    _, problems = validate([path])
    (problem,) = problems
    assert problem.field == "rationale.zh"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[problem.line - 1].strip() == "第三行说小批次。"


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
    # A hand-written page glosses a term on its first use, as a record does.
    unglossed = {name: first_use_problems([((name,), pages[name])]) for name in pages}
    assert not {k: v for k, v in unglossed.items() if v and k in texts}, unglossed


#: The benchmark page's labels of measured memory: one label serves CPU and GPU results.
MEMORY_LABELS = (
    "bench_less",
    "bench_more",
    "bench_mem_same",
    "bench_tradeoff",
    "memory_results",
    "memory_chart_title",
    "kind_memory",
    "legend_memory_good",
    "legend_memory_bad",
    "legend_memory_same",
)


def test_memory_labels_shared_by_every_device_use_the_device_neutral_term() -> None:
    """内存 is host memory and 显存 GPU memory: a label for both says 显存/内存."""
    (neutral,) = [t.zh for t in load_glossary().terms if t.en.startswith("memory, in a label")]
    zh = labels_zh()
    for key in MEMORY_LABELS:
        assert neutral in zh[key], key
        assert not re.search("内存|显存", zh[key].replace(neutral, "")), key
    # A reduction is "降为 1/N", not "减少 N 倍" (which reads as minus N times).
    assert "1/" in zh["bench_less"] and "减少" not in zh["bench_less"]


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
