"""Plain-text rendering of a tip for ``python -m generator show``.

Its headings are labels of ``generator/templates/site/ui.yaml``, and its category, impacts,
devices and seed sources the taxonomy's labels, like the site's, in the language asked for.
"""

from __future__ import annotations

from generator.records import ui
from generator.records.render import render
from generator.records.schema import Tip
from generator.records.taxonomy import CATEGORIES, COMPOSE_FEATURES, DEVICES, IMPACTS, SEEDS


def render_tip(tip: Tip, lang: str = "en") -> str:
    """The tip as readable terminal text in ``lang``."""
    flag = COMPOSE_FEATURES.get(tip.compose) if tip.compose else None
    return render(
        "show.txt.j2",
        tip=tip,
        lang=lang,
        labels=ui.labels(),
        categories=CATEGORIES,
        impacts=[IMPACTS[i].get(lang) for i in tip.impact],
        devices=[DEVICES[d].get(lang) for d in tip.hardware.devices],
        seeds=SEEDS,
        flag=flag,
        snippet_dir=f"snippets/{tip.id}",
    )
