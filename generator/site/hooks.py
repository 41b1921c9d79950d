"""MkDocs hooks: render the pages from tips/ before each build, localise the navigation,
join Chinese line breaks, and index the built site for search.

Registered in mkdocs.yml under ``hooks:``. A plain ``mkdocs build`` or ``mkdocs serve``
straight after a clone therefore always shows the records as they are, with a fresh
search index (Pagefind, see `generator.site.search`).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.nav import Section

from generator import paths
from generator.compose.script import expand_placeholders, tips_by_feature
from generator.errors import InvalidRecords, UserError
from generator.lint.tips import rule_code_problems
from generator.records import cjk, ui
from generator.records.generated import write_managed
from generator.records.load import load_tips
from generator.records.problems import load_entry_points
from generator.records.problems import page_files as entry_point_pages
from generator.records.render import render
from generator.records.taxonomy import CATEGORIES
from generator.site import search as sitesearch
from generator.site.pages import nav, write_pages

log = logging.getLogger("mkdocs.hooks.generator")

#: Section titles of the navigation in Chinese (pages take their titles from their H1).
_ZH_SECTIONS = {label.en: label.zh for label in CATEGORIES.values()}
_ZH_SECTIONS |= {"Tips": "技巧", "Problems": "按问题查找", "Contributing": "参与贡献"}

#: Computed once per build in on_config, used by the page hooks.
_state: dict[str, object] = {}

#: Markers of the hand-written pages, replaced with generated Markdown (see on_page_markdown).
_TIP_COUNT = "<!-- tip-count -->"
_PROBLEM_CARDS = "<!-- problem-cards -->"


def _share_highlighting_between_languages() -> None:
    """Highlight each code block once per build, not once per language.

    The English and Chinese pages show the same snippets, and Pygments is the largest single
    cost of the build. The result depends only on the highlighter's settings and the call's
    arguments, which are the key; a call with unhashable arguments is not cached.
    """
    from pymdownx import highlight

    original = highlight.Highlight.highlight
    if getattr(original, "_shared", False):
        return
    cache: dict[object, str] = {}

    def shared(self, src, language, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        try:
            key = (
                repr(sorted(vars(self).items())),
                src,
                language,
                args,
                tuple(sorted(kwargs.items())),
            )
            hash(key)
        except TypeError:
            return original(self, src, language, *args, **kwargs)
        if key not in cache:
            cache[key] = original(self, src, language, *args, **kwargs)
        return cache[key]

    shared._shared = True  # type: ignore[attr-defined]
    highlight.Highlight.highlight = shared  # type: ignore[method-assign]


@event_priority(100)
def on_config(config):  # noqa: ANN001, ANN201 - MkDocs hook signature
    _share_highlighting_between_languages()
    if _nested(config) and "nav" in _state:
        # mkdocs-static-i18n builds the Chinese pages inside the main build, with the same
        # config: the pages are written and the state computed already, by the main build.
        config["nav"] = _state["nav"]
        return config
    try:
        tips = load_tips(cross_checks=[rule_code_problems])
    except InvalidRecords as err:
        for problem in err.problems:
            log.error("%s", problem)
        raise PluginError(f"{err}: run `python -m generator validate`") from None
    written = write_pages(tips)
    if written:
        log.info("generator: wrote %d page(s) from %d tip records", len(written), len(tips))
    try:
        entry_points = load_entry_points(frozenset(str(t.id) for t in tips))
    except InvalidRecords as err:
        for problem in err.problems:
            log.error("%s", problem)
        raise PluginError(f"{err}: run `python -m generator validate`") from None
    by_id = {str(t.id): t for t in tips}
    entry_files = entry_point_pages(entry_points, by_id, ui.labels())
    write_managed(entry_files, [paths.DOCS / "problems"])
    pages = nav(tips)
    pages.insert(pages.index("coverage.md") + 1, "glossary.md")
    pages.insert(pages.index("composer.md") + 1, "lint.md")
    problem_pages = [f"problems/{slug}.md" for slug in entry_points.problems]
    pages[pages.index("usage.md") + 1 : pages.index("usage.md") + 1] = [
        {"Problems": [*problem_pages, "checklist.md"]}
    ]
    config["nav"] = pages
    _state["nav"] = pages
    _state["cites"] = tips_by_feature(tips)
    _state["tips"] = by_id
    _state["entry_points"] = entry_points
    _state["keywords"] = {lang: entry_points.keywords_by_tip(lang) for lang in ("en", "zh")}
    return config


def _nested(config) -> bool:  # noqa: ANN001
    """Whether this is a language build that mkdocs-static-i18n runs inside the main one."""
    i18n = config.plugins.get("i18n")
    return bool(i18n is not None and getattr(i18n, "building", False))


def _lang(config) -> str:  # noqa: ANN001
    """The language being built (mkdocs-static-i18n builds English, then Chinese)."""
    i18n = config.plugins.get("i18n")
    return str(getattr(i18n, "current_language", None) or "en")


def on_env(env, config, files):  # noqa: ANN001, ANN201
    """Give the theme overrides (overrides/) the site's UI labels, as ``ui_labels``."""
    env.globals["ui_labels"] = ui.labels()
    return env


def on_page_markdown(markdown, page, config, files):  # noqa: ANN001, ANN201
    """Expand the markers of hand-written pages: ``<!-- compose: FLAGS -->`` into the script
    the composer writes today (``<!-- compose-flags: MODEL -->`` into its flag table),
    ``<!-- tip-count -->`` into the number of tips and
    ``<!-- problem-cards -->`` into the home page's cards, one per problem."""
    if _TIP_COUNT in markdown:
        markdown = markdown.replace(_TIP_COUNT, str(len(_state.get("tips", {}))))
    if _PROBLEM_CARDS in markdown:
        entry_points = _state["entry_points"]
        cards = render(
            "site/home_problems.md.j2",
            problems=entry_points.problems,
            checklist=entry_points.checklist,
            lang=_lang(config),
            L=ui.labels()[_lang(config)],
        )
        markdown = markdown.replace(_PROBLEM_CARDS, cards)
    if "<!-- compose" not in markdown:
        return markdown
    try:
        return expand_placeholders(markdown, _state.get("cites", {}))
    except UserError as err:
        raise PluginError(f"{page.file.src_path}: {err}") from None


def on_page_content(html, page, config, files):  # noqa: ANN001, ANN201
    """Join Chinese line breaks, then mark the page up for the search index."""
    lang = _lang(config)
    html = cjk.join_lines(html)
    src = page.file.src_uri
    match = re.fullmatch(r"tips/([^/]+?)(?:\.zh)?\.md", src)
    tip = _state.get("tips", {}).get(match.group(1)) if match else None
    if tip is None:
        marked = sitesearch.mark_page(html, src, lang)
    else:
        keywords = _state["keywords"][lang].get(str(tip.id), [])
        marked = sitesearch.mark_page(
            html,
            src,
            lang,
            summary=tip.summary.get(lang),
            keywords=sitesearch.tip_keywords(tip, lang, keywords),
            tip_id=str(tip.id),
        )
    return marked


@event_priority(-200)  # after mkdocs-static-i18n (priority -100) has built every language
def on_post_build(config):  # noqa: ANN001, ANN201
    """Index the whole built site (both languages) for search, once per build."""
    if _nested(config):
        return  # a language build nested in the main one: the main build indexes everything
    try:
        sitesearch.build_index(Path(config["site_dir"]))
    except UserError as err:
        raise PluginError(str(err)) from None


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
