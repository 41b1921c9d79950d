"""Copy-paste snippet files: ``snippets/<id>/before.py`` and ``after.py``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from generator import paths
from generator.records.render import render
from generator.records.schema import Tip


def snippet_path(tip_id: str, variant: str) -> Path:
    """Where the snippet of ``variant`` (``before``/``after``) of a tip is written."""
    return paths.SNIPPETS / tip_id / f"{variant}.py"


def snippet_files(tips: Iterable[Tip]) -> dict[Path, str]:
    """Render every snippet file of ``tips``: path -> content."""
    files = {}
    for tip in tips:
        assert tip.id is not None
        for variant, body in tip.variants().items():
            text = render("snippet.py.j2", tip=tip, variant=variant, code=body.code)
            files[snippet_path(tip.id, variant)] = text
    return files
