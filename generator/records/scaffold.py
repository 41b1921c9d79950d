"""``python -m generator new``: start a tip record from the template."""

from __future__ import annotations

import os
import re
from pathlib import Path

from generator import paths
from generator.errors import UserError
from generator.records.fields import ID_PATTERN
from generator.records.render import render
from generator.records.taxonomy import CATEGORIES


def new_tip(tip_id: str, category: str = "training-loop", tips_dir: Path | None = None) -> Path:
    """Create ``tips/<tip_id>.yaml`` from the template and return its path.

    Raises:
        UserError: the id is malformed, the category unknown, or the file already exists.
    """
    if not re.fullmatch(ID_PATTERN, tip_id):
        raise UserError(f"invalid id {tip_id!r}: use lowercase words joined by hyphens")
    if category not in CATEGORIES:
        raise UserError(f"unknown category {category!r}")
    folder = tips_dir or paths.TIPS
    path = folder / f"{tip_id}.yaml"
    text = render("tip.yaml.j2", id=tip_id, category=category)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        # "x" mode: fail rather than overwrite, even if the file appears meanwhile
        with open(path, "x", encoding="utf-8") as fh:
            fh.write(text)
    except FileExistsError:
        raise UserError(f"{path} already exists; not overwriting it") from None
    os.chmod(path, 0o644)
    return path
