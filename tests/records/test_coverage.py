"""Coverage: every seed-inventory row and tuning-guide item maps to existing tips."""

from __future__ import annotations

import os

import pytest

from generator.records.coverage import INVENTORY, inventory_topics, load_coverage

COVERAGE = load_coverage()


def test_every_mapped_tip_exists(tip_ids: frozenset[str]) -> None:
    missing = {(r.topic, t) for r in COVERAGE.all_rows() for t in r.tips if t not in tip_ids}
    assert not missing, sorted(missing)


def test_every_inventory_row_has_a_tip() -> None:
    if not INVENTORY.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{INVENTORY} is missing: CI clones with shared/ beside the checkout")
        pytest.skip(f"{INVENTORY} is not beside this checkout (it is in CI)")
    mapped = {(r.section, r.topic) for r in COVERAGE.seed_inventory}
    rows = inventory_topics()
    assert len(rows) >= 50, "the inventory parser found too few rows"
    unmapped = [f"{s}: {t}" for s, t in rows if (s, t) not in mapped]
    assert not unmapped, "inventory rows without a tip in tips/_coverage.yaml:\n" + "\n".join(
        unmapped
    )


def test_the_tuning_guide_items_named_by_the_issue_are_covered() -> None:
    topics = " ".join(r.topic.lower() for r in COVERAGE.tuning_guide)
    for needle in (
        "debugging apis",
        "tf32",
        "cuda graphs",
        "variable-length inputs",
        "no_sync",
        "find_unused_parameters",
        "load-balance",
        "set_num_threads",
        "numa",
        "fused",
    ):
        assert needle in topics, needle
