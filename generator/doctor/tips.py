"""The doctor's finding kinds against the tip records: each kind names a tip that exists.

A cross-check for `generator.records.load.validate`, like the lint rules' one
(`generator.lint.tips`): it runs wherever the whole corpus is validated.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from generator.command import relative
from generator.doctor import kinds
from generator.errors import Problem
from generator.records.schema import Tip
from generator.records.yamlio import Document


def _lines() -> dict[str, int]:
    """Each kind's line in ``kinds.py`` (its ``"name": Kind(`` entry)."""
    path = Path(kinds.__file__)
    try:
        text = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    out: dict[str, int] = {}
    for number, line in enumerate(text, 1):
        name, sep, _ = line.strip().partition(": Kind(")
        if sep and name.startswith('"'):
            out.setdefault(name.strip('"'), number)
    return out


def finding_tip_problems(
    loaded: Mapping[Path, tuple[Tip, Document]], whole_corpus: bool
) -> list[Problem]:
    """Each finding kind of `KINDS` names a tip of the corpus, reported at the kind's line
    of ``kinds.py`` (checked on the whole corpus only: a subset of the records does not show
    which tips are missing)."""
    if not whole_corpus:
        return []
    ids = {str(tip.id) for tip, _ in loaded.values()}
    missing = [(name, kind) for name, kind in kinds.KINDS.items() if kind.tip not in ids]
    if not missing:
        return []
    file, lines = relative(Path(kinds.__file__)), _lines()
    return [
        Problem(file, lines.get(name, 1), name, f"names no tip: {kind.tip!r}")
        for name, kind in missing
    ]
