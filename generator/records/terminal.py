"""Plain-text rendering of a tip for ``python -m generator show``.

Its headings are labels of ``generator/templates/site/ui.yaml``, like the site's.
"""

from __future__ import annotations

from generator.records import ui
from generator.records.render import render
from generator.records.schema import Tip
from generator.records.taxonomy import CATEGORIES, COMPOSE_FEATURES


def render_tip(tip: Tip, lang: str = "en") -> str:
    """The tip as readable terminal text in ``lang``."""
    flag = COMPOSE_FEATURES.get(tip.compose) if tip.compose else None
    return render(
        "show.txt.j2",
        tip=tip,
        lang=lang,
        labels=ui.labels(),
        categories=CATEGORIES,
        flag=flag,
        snippet_dir=f"snippets/{tip.id}",
    )
