"""MkDocs hooks: render the pages from tips/ before each build, localise the navigation,
join Chinese line breaks, put the tools' runtime in the site, and index it for search.

Registered in mkdocs.yml under ``hooks:``. A plain ``mkdocs build`` or ``mkdocs serve``
straight after a clone therefore always shows the records as they are, with a fresh
search index (Pagefind, see `generator.site.search`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import NamedTuple

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.nav import Section

from generator import paths
from generator.compose.script import expand_placeholders, read_tips_by_feature, tips_by_feature
from generator.doctor import docs as doctor_docs
from generator.doctor.tips import finding_tip_problems
from generator.errors import InvalidRecords, UserError
from generator.lint.tips import rule_code_problems
from generator.records import cjk, ui
from generator.records.generated import write_managed
from generator.records.load import load_tips
from generator.records.problems import load_entry_points
from generator.records.problems import page_files as entry_point_pages
from generator.records.render import render
from generator.records.taxonomy import CATEGORIES
from generator.site import runtime as tool_runtime
from generator.site import search as sitesearch
from generator.site import tools
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
    try:  # the composer page and the lint playground run the project's code in the browser
        _state["runtime"] = tool_runtime.prepare()
    except UserError as err:
        raise PluginError(str(err)) from None
    try:
        tips = load_tips(cross_checks=[rule_code_problems, finding_tip_problems])
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
    # The tools and the checklist lead, right after the home page (issue 17).
    pages.insert(pages.index("composer.md") + 1, "lint.md")
    pages.insert(pages.index("lint.md") + 1, "lint/playground.md")
    pages.insert(pages.index("lint/playground.md") + 1, "doctor.md")
    pages.insert(pages.index("doctor.md") + 1, "checklist.md")
    problem_pages = [f"problems/{slug}.md" for slug in entry_points.problems]
    pages[pages.index("usage.md") + 1 : pages.index("usage.md") + 1] = [{"Problems": problem_pages}]
    config["nav"] = pages
    _state["nav"] = pages
    _state["directory"] = {}
    _state["cites"] = tips_by_feature(tips)
    _state["tips"] = by_id
    _state["entry_points"] = entry_points
    _state["keywords"] = {lang: entry_points.keywords_by_tip(lang) for lang in ("en", "zh")}
    _state["tool_cites"] = read_tips_by_feature()
    _state["lead"] = {
        lang: entry_points.keywords_by_tip(lang, sitesearch.LEADING_TIPS) for lang in ("en", "zh")
    }
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
    ``<!-- tip-count -->`` into the number of tips, ``<!-- problem-cards -->`` into the home
    page's cards, one per problem, the tool pages' markers into the composer's form and the
    tools' scripts (`generator.site.tools`), and the doctor's page's into its measured example
    and overhead (`generator.doctor.docs`)."""
    if _TIP_COUNT in markdown:
        markdown = markdown.replace(_TIP_COUNT, str(len(_state.get("tips", {}))))
    markdown = tools.expand_markers(
        markdown,
        page.url,
        _lang(config),
        _state["runtime"].bundle_name,
        _state["tool_cites"],
        list(_state["tips"].values()),
    )
    if "<!-- doctor-" in markdown:  # the doctor's page: a real run's report, its overhead
        try:
            markdown = doctor_docs.expand(markdown, _lang(config), ui.labels()[_lang(config)])
        except UserError as err:
            raise PluginError(f"{page.file.src_path}: {err}") from None
    if _PROBLEM_CARDS in markdown:
        entry_points = _state["entry_points"]
        cards = render(
            "site/home_problems.md.j2",
            problems=entry_points.problems,
            checklist=entry_points.checklist,
            pages=entry_points.pages,
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
    kind = sitesearch.page_kind(src)
    if kind is None:
        return html
    words = _search_words(src, lang)
    url = page.url.removeprefix(f"{lang}/") if lang != "en" else page.url
    directory = _state.setdefault("directory", {}).setdefault(lang, {})
    directory[url] = sitesearch.directory_entry(
        url,
        page.title or "",
        kind,
        words.own,
        words.summary,
        words.keywords if words.topics is None else words.topics,
        words.lead,
    )
    return sitesearch.mark_page(html, src, lang, words.summary, words.keywords, words.tip_id)


class _Words(NamedTuple):
    """What search knows of a page besides its text."""

    summary: str | None = None
    keywords: list[str] = []
    topics: list[str] | None = None  # the keywords ranked in the directory (default: all)
    own: list[str] = []  # the page's own words, for the best-match row
    lead: list[str] = []  # the problem words of the problems that list a tip first
    tip_id: str | None = None


def _search_words(src: str, lang: str) -> _Words:
    key = sitesearch.page_key(src)
    entry_points = _state["entry_points"]
    tip = _state.get("tips", {}).get(key.removeprefix("tips/")) if key.startswith("tips/") else None
    if tip is not None:
        tip_id = str(tip.id)
        problem_words = _state["keywords"][lang].get(tip_id, [])
        return _Words(
            summary=tip.summary.get(lang),
            keywords=sitesearch.tip_keywords(tip, lang, problem_words),
            topics=sitesearch.tip_keywords(tip, lang, problem_words, variants=False),
            own=[tip_id.replace("-", " ")],
            lead=_state["lead"][lang].get(tip_id, []),
            tip_id=tip_id,
        )
    entry: object = None
    if key.startswith("problems/"):
        entry = entry_points.problems.get(key.removeprefix("problems/"))
    elif key == "checklist":
        entry = entry_points.checklist
    elif key in entry_points.pages:
        entry = entry_points.pages[key]
    summary = getattr(entry, "summary", None) or getattr(entry, "intro", None)
    keywords = getattr(entry, "keywords", None)
    words = list(keywords.get(lang)) if keywords else []
    code = sitesearch.rule_code(src)
    if code:  # a lint rule's page is found by its code
        words.insert(0, code)
    if key == "lint":  # and so is the page that lists every rule
        from generator.lint.rules import RULES

        words += [rule.code for rule in RULES]
    return _Words(summary=summary.get(lang) if summary else None, keywords=words, own=words)


@event_priority(-200)  # after mkdocs-static-i18n (priority -100) has built every language
def on_post_build(config):  # noqa: ANN001, ANN201
    """Index the whole built site (both languages) for search, once per build; drop the
    sitemap while the site has no public address."""
    if _nested(config):
        return  # a language build nested in the main one: the main build indexes everything
    tool_runtime.write_runtime(_state["runtime"], Path(config["site_dir"]))
    if not config["site_url"]:
        # A sitemap lists absolute URLs: without $PYTORCH_TIPS_SITE_URL it would list
        # "None..." addresses, so there is none.
        for name in ("sitemap.xml", "sitemap.xml.gz"):
            (Path(config["site_dir"]) / name).unlink(missing_ok=True)
    try:
        sitesearch.build_index(Path(config["site_dir"]))
    except UserError as err:
        raise PluginError(str(err)) from None
    directory = _state.get("directory", {})
    sitesearch.write_directory(
        Path(config["site_dir"]), {k: v.values() for k, v in directory.items()}
    )


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
