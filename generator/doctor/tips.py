"""The doctor's finding kinds against the tip records: each kind names a tip that exists.

A cross-check for `generator.records.load.validate`, like the lint rules' one
(`generator.lint.tips`): it runs wherever the whole corpus is validated.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from generator.doctor.kinds import KINDS
from generator.errors import Problem
from generator.records.schema import Tip
from generator.records.yamlio import Document


def finding_tip_problems(
    loaded: Mapping[Path, tuple[Tip, Document]], whole_corpus: bool
) -> list[Problem]:
    """Each finding kind of `KINDS` names a tip of the corpus (checked on the whole corpus
    only: a subset of the records does not show which tips are missing)."""
    if not whole_corpus:
        return []
    ids = {str(tip.id) for tip, _ in loaded.values()}
    return [
        Problem("generator/doctor/kinds.py", 0, name, f"names no tip: {kind.tip!r}")
        for name, kind in KINDS.items()
        if kind.tip not in ids
    ]
