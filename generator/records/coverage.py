"""The coverage map: which tip covers each topic of the seed inventory and the tuning guide.

The map lives in ``tips/_coverage.yaml`` and is rendered as ``docs/coverage.md``. The seed
inventory itself is ``shared/SEED_TIPS.md`` beside the checkout; `inventory_topics`
reads its table rows so a test can prove that no row is left without a tip.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from generator import paths
from generator.records.yamlio import read_document

COVERAGE_FILE = paths.TIPS / "_coverage.yaml"
INVENTORY = paths.ROOT.parent / "shared" / "SEED_TIPS.md"


class Row(BaseModel):
    """One topic and the tips that cover it."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    section: str | None = Field(default=None, description="Inventory section, for seed rows.")
    topic: str = Field(min_length=1, description="The topic, as the source names it.")
    topic_zh: str = Field(min_length=1, description="The topic in Chinese, for the zh page.")
    tips: list[str] = Field(min_length=1, description="Ids of the tips covering the topic.")


class Coverage(BaseModel):
    """The whole coverage map."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    section_names: dict[str, str] = Field(
        description="Chinese name of each section of the inventory (English name -> Chinese)."
    )
    seed_inventory: list[Row] = Field(description="Every row of shared/SEED_TIPS.md.")
    tuning_guide: list[Row] = Field(description="Recommendations of the PyTorch tuning guide.")
    distributed_traps: list[Row] = Field(description="Distributed-training correctness traps.")
    current_practice: list[Row] = Field(
        description="The twenty topics of current (2026) training practice, each with its tips."
    )

    @model_validator(mode="after")
    def _sections_named(self) -> Coverage:
        missing = {r.section for r in self.all_rows() if r.section} - set(self.section_names)
        if missing:
            raise ValueError(f"section_names lacks {sorted(missing)}")
        return self

    def tables(self) -> list[tuple[str, list[Row]]]:
        """(key, rows) of every table, in page order."""
        return [
            ("seed_inventory", self.seed_inventory),
            ("tuning_guide", self.tuning_guide),
            ("distributed_traps", self.distributed_traps),
            ("current_practice", self.current_practice),
        ]

    def all_rows(self) -> list[Row]:
        """Every row of every table."""
        return [row for _, rows in self.tables() for row in rows]


def load_coverage(path: Path = COVERAGE_FILE) -> Coverage:
    """Read and validate the coverage map."""
    return Coverage.model_validate(read_document(path).data)


def inventory_topics(path: Path = INVENTORY) -> list[tuple[str, str]]:
    """(section, topic) of every table row in the seed inventory Markdown file."""
    rows, section = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        match = re.match(r"^\| (.+?) \| .+? \| .*\|$", line.strip())
        if match and match.group(1) not in ("topic",) and not match.group(1).startswith("---"):
            rows.append((section, match.group(1)))
    return rows
