"""Search: English words, Chinese words and API names find the right tip, ranked."""

from __future__ import annotations

import pytest

from generator.records.load import load_tips
from generator.records.search import detect_lang, search

TIPS = load_tips()


def _ids(query: str, **kw: object) -> list[str]:
    return [h.id for h in search(TIPS, query, **kw)]


@pytest.mark.parametrize(
    ("query", "expected", "top"),
    [
        ("set_to_none", "zero-grad-set-to-none", 1),
        ("no_grad", "inference-mode-for-eval", 1),
        ("zero gradients", "zero-grad-set-to-none", 1),
        ("gradient accumulation", "gradient-accumulation", 1),
        ("mixed precision", "autocast-mixed-precision", 1),
        ("out of memory", "find-max-batch-size", 3),
        ("DataLoader workers", "dataloader-num-workers", 3),
        ("清零梯度", "zero-grad-set-to-none", 1),
        ("混合精度", "autocast-mixed-precision", 1),
        ("梯度累积", "gradient-accumulation", 3),
        ("显存", "measure-gpu-memory", 5),
        ("分布式数据并行", "ddp-over-dataparallel", 5),
    ],
)
def test_queries_find_the_expected_tip(query: str, expected: str, top: int) -> None:
    assert expected in _ids(query)[:top]


def test_language_is_detected_from_the_query() -> None:
    assert detect_lang("显存不够") == "zh"
    assert detect_lang("out of memory") == "en"


def test_stemming_and_fallback_to_any_word() -> None:
    # "zeroing" stems to "zero"; the nonsense word does not stop the OR fallback.
    assert "zero-grad-set-to-none" in _ids("zeroing gradients qwxyz")


def test_no_match_and_punctuation_only_queries_return_nothing() -> None:
    assert _ids("qwxyzzy") == []
    assert _ids("?!.") == []


def test_limit_is_respected() -> None:
    assert len(_ids("torch", limit=1)) <= 1
