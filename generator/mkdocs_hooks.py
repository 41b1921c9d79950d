"""MkDocs hooks: render the pages from tips/ before each build and localise the navigation.

Registered in mkdocs.yml under ``hooks:``. A plain ``mkdocs build`` or ``mkdocs serve``
straight after a clone therefore always shows the records as they are.
"""

from __future__ import annotations

import logging

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.nav import Section

from generator import paths
from generator.compose import expand_placeholders, tips_by_feature
from generator.errors import InvalidRecords, UserError
from generator.generated import write_atomic
from generator.glossary import load_glossary, page_markdown
from generator.lint.docs import page_markdown as lint_page
from generator.records import load_tips
from generator.site import nav, write_pages
from generator.taxonomy import CATEGORIES

log = logging.getLogger("mkdocs.hooks.generator")

#: Section titles of the navigation in Chinese (pages take their titles from their H1).
_ZH_SECTIONS = {label.en: label.zh for label in CATEGORIES.values()}
_ZH_SECTIONS |= {"Tips": "技巧", "Reference": "参考"}

#: Computed once per build in on_config, used by the page hooks.
_state: dict[str, dict[str, list[str]]] = {}


@event_priority(100)
def on_config(config):  # noqa: ANN001, ANN201 - MkDocs hook signature
    try:
        tips = load_tips()
    except InvalidRecords as err:
        for problem in err.problems:
            log.error("%s", problem)
        raise PluginError(f"{err}: run `python -m generator validate`") from None
    written = write_pages(tips)
    if written:
        log.info("generator: wrote %d page(s) from %d tip records", len(written), len(tips))
    glossary = load_glossary()
    for stem, render_page in (
        ("glossary", lambda lang: page_markdown(lang, glossary)),
        ("lint", lint_page),
    ):
        for lang in ("en", "zh"):
            path = paths.DOCS / (f"{stem}.md" if lang == "en" else f"{stem}.{lang}.md")
            content = render_page(lang)
            if not path.exists() or path.read_text(encoding="utf-8") != content:
                write_atomic(path, content)
    pages = nav(tips)
    pages.insert(pages.index("coverage.md") + 1, "glossary.md")
    pages.insert(pages.index("composer.md") + 1, "lint.md")
    config["nav"] = pages
    _state["cites"] = tips_by_feature(tips)
    return config


def on_page_markdown(markdown, page, config, files):  # noqa: ANN001, ANN201
    """Expand ``<!-- compose: FLAGS -->`` lines into the script the composer writes today."""
    if "<!-- compose:" not in markdown:
        return markdown
    try:
        return expand_placeholders(markdown, _state.get("cites", {}))
    except UserError as err:
        raise PluginError(f"{page.file.src_path}: {err}") from None


@event_priority(-200)  # after mkdocs-static-i18n (priority -100) has built the language's nav
def on_nav(navigation, config, files):  # noqa: ANN001, ANN201
    i18n = config.plugins.get("i18n")
    if i18n is None or getattr(i18n, "current_language", "en") != "zh":
        return navigation

    def translate(items):  # noqa: ANN001, ANN202
        for item in items:
            if isinstance(item, Section):
                item.title = _ZH_SECTIONS.get(item.title, item.title)
                translate(item.children)

    translate(navigation.items)
    return navigation


def on_serve(server, config, builder):  # noqa: ANN001, ANN201
    server.watch(str(paths.TIPS))
    return server
