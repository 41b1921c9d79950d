"""MkDocs hooks: render the pages from tips/ before each build, localise the navigation,
join Chinese line breaks, put the tools' runtime in the site, and index it for search.

Registered in mkdocs.yml under ``hooks:``. A plain ``mkdocs build`` or ``mkdocs serve``
straight after a clone therefore always shows the records as they are, with a fresh
search index (Pagefind, see `generator.site.search`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from jinja2 import Environment
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page

from generator import paths
from generator.compose.script import expand_placeholders, read_tips_by_feature, tips_by_feature
from generator.compose.tips import block_problems
from generator.doctor import docs as doctor_docs
from generator.doctor.tips import finding_tip_problems
from generator.errors import InvalidRecords, UserError
from generator.lint.tips import rule_code_problems
from generator.records import cjk, ui
from generator.records.generated import write_managed
from generator.records.load import load_tips
from generator.records.problems import EntryPoints, load_entry_points
from generator.records.problems import page_files as entry_point_pages
from generator.records.render import render
from generator.records.schema import Tip
from generator.records.taxonomy import CATEGORIES
from generator.site import runtime as tool_runtime
from generator.site import search as sitesearch
from generator.site import tools
from generator.site.pages import nav, write_pages

log = logging.getLogger("mkdocs.hooks.generator")

#: The navigation's sections that are not categories: their titles are ui.yaml labels.
NAV_SECTIONS = ("nav_tips", "nav_problems", "nav_contributing")


def _zh_sections() -> dict[str, str]:
    """Section titles of the navigation in Chinese, by the English (pages take their titles
    from their H1)."""
    en, zh = ui.labels()["en"], ui.labels()["zh"]
    return {label.en: label.zh for label in CATEGORIES.values()} | {
        en[key]: zh[key] for key in NAV_SECTIONS
    }


@dataclass
class BuildState:
    """What `on_config` computes once per build for the page hooks."""

    #: The tools' runtime (Pyodide and our archive), written into the site after the build.
    runtime: tool_runtime.Runtime
    #: The navigation, for the nested Chinese build.
    nav: list[Any]
    #: The records by id.
    tips: dict[str, Tip]
    #: Composer feature -> the ids of the tips declaring it, from the validated records.
    cites: dict[str, list[str]]
    #: The same, as ``python -m generator compose`` reads it (the tool pages).
    tool_cites: dict[str, list[str]]
    #: The problem pages, the checklist and the guides.
    entry_points: EntryPoints
    #: By language, for each tip id, the words of the problems that list it.
    keywords: dict[str, dict[str, list[str]]]
    #: By language, for each tip id, the words of the problems that list it first.
    lead: dict[str, dict[str, list[str]]]
    #: By language, the search directory's entry of each page, by URL.
    directory: dict[str, dict[str, dict[str, object]]] = field(default_factory=dict)


#: Computed once per build in on_config (the nested Chinese build keeps it), used by the
#: page hooks.
_build: BuildState | None = None


def _state() -> BuildState:
    if _build is None:
        raise PluginError("generator hooks: on_config has not run")
    return _build


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

    if getattr(highlight.Highlight, "_pytorch_tips_shared", False):
        return  # patched already (MkDocs loads this module afresh for each build)
    original = highlight.Highlight.highlight
    cache: dict[object, str] = {}

    def shared(self: Any, src: str, language: str, *args: Any, **kwargs: Any) -> str:
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

    highlight.Highlight.highlight = shared
    highlight.Highlight._pytorch_tips_shared = True


@event_priority(100)
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    global _build
    _share_highlighting_between_languages()
    if _nested(config) and _build is not None:
        # mkdocs-static-i18n builds the Chinese pages inside the main build, with the same
        # config: the pages are written and the state computed already, by the main build.
        config["nav"] = _build.nav
        return config
    try:  # the composer page and the lint playground run the project's code in the browser
        runtime = tool_runtime.prepare()
    except UserError as err:
        raise PluginError(str(err)) from None
    try:
        tips = load_tips(cross_checks=[rule_code_problems, block_problems, finding_tip_problems])
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
    problems = {ui.labels()["en"]["nav_problems"]: problem_pages}
    pages[pages.index("usage.md") + 1 : pages.index("usage.md") + 1] = [problems]
    config["nav"] = pages
    _build = BuildState(
        runtime=runtime,
        nav=pages,
        tips=by_id,
        cites=tips_by_feature(tips),
        tool_cites=read_tips_by_feature(),
        entry_points=entry_points,
        keywords={lang: entry_points.keywords_by_tip(lang) for lang in ui.LANGS},
        lead={
            lang: entry_points.keywords_by_tip(lang, sitesearch.LEADING_TIPS) for lang in ui.LANGS
        },
    )
    return config


def _nested(config: MkDocsConfig) -> bool:
    """Whether this is a language build that mkdocs-static-i18n runs inside the main one."""
    i18n = config.plugins.get("i18n")
    return bool(i18n is not None and getattr(i18n, "building", False))


def _lang(config: MkDocsConfig) -> str:
    """The language being built (mkdocs-static-i18n builds English, then Chinese)."""
    i18n = config.plugins.get("i18n")
    return str(getattr(i18n, "current_language", None) or "en")


def on_env(env: Environment, config: MkDocsConfig, files: Files) -> Environment:
    """Give the theme overrides (overrides/) the site's UI labels, as ``ui_labels``."""
    env.globals["ui_labels"] = ui.labels()
    return env


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Expand the markers of hand-written pages: ``<!-- compose: FLAGS -->`` into the script
    the composer writes today (``<!-- compose-flags: MODEL -->`` into its flag table),
    ``<!-- tip-count -->`` into the number of tips, ``<!-- problem-cards -->`` into the home
    page's cards, one per problem, the tool pages' markers into the composer's form and the
    tools' scripts (`generator.site.tools`), and the doctor's page's into its measured example
    and overhead (`generator.doctor.docs`)."""
    state = _state()
    if _TIP_COUNT in markdown:
        markdown = markdown.replace(_TIP_COUNT, str(len(state.tips)))
    markdown = tools.expand_markers(
        markdown,
        page.url,
        _lang(config),
        state.runtime.bundle_name,
        state.tool_cites,
        list(state.tips.values()),
    )
    if "<!-- doctor-" in markdown:  # the doctor's page: a real run's report, its overhead
        try:
            markdown = doctor_docs.expand(markdown, _lang(config), ui.labels()[_lang(config)])
        except UserError as err:
            raise PluginError(f"{page.file.src_path}: {err}") from None
    if _PROBLEM_CARDS in markdown:
        entry_points = state.entry_points
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
        return expand_placeholders(markdown, state.cites)
    except UserError as err:
        raise PluginError(f"{page.file.src_path}: {err}") from None


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Join Chinese line breaks, then mark the page up for the search index."""
    lang = _lang(config)
    html = cjk.join_lines(html)
    src = page.file.src_uri
    kind = sitesearch.page_kind(src)
    if kind is None:
        return html
    words = _search_words(src, lang)
    url = page.url.removeprefix(f"{lang}/") if lang != "en" else page.url
    directory = _state().directory.setdefault(lang, {})
    directory[url] = sitesearch.directory_entry(
        url,
        words.title or page.title or "",
        kind,
        words.own,
        words.summary,
        words.keywords,
        words.lead,
    )
    return sitesearch.mark_page(html, src, lang, words.summary, words.keywords, words.tip_id)


class _Words(NamedTuple):
    """What search knows of a page besides its text."""

    summary: str | None = None
    keywords: list[str] = []
    own: list[str] = []  # the page's own words, for the best-match row
    lead: list[str] = []  # the problem words of the problems that list a tip first
    tip_id: str | None = None
    title: str | None = None  # the title search shows, when it is not the page's


def _search_words(src: str, lang: str) -> _Words:
    key = sitesearch.page_key(src)
    state = _state()
    entry_points = state.entry_points
    tip = state.tips.get(key.removeprefix("tips/")) if key.startswith("tips/") else None
    if tip is not None:
        tip_id = str(tip.id)
        problem_words = state.keywords[lang].get(tip_id, [])
        return _Words(
            summary=tip.summary.get(lang),
            keywords=sitesearch.tip_keywords(tip, lang, problem_words),
            own=[tip_id.replace("-", " ")],
            lead=state.lead[lang].get(tip_id, []),
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
    if code:  # a lint rule's page is found by its code, and titled as in the CLI
        from generator.lint.docs import search_document

        doc = search_document(code, lang, list(_state().tips.values()))
        own = list(doc.own)
        return _Words(summary=doc.summary, keywords=list(doc.keywords), own=own, title=doc.title)
    return _Words(summary=summary.get(lang) if summary else None, keywords=words, own=words)


@event_priority(-200)  # after mkdocs-static-i18n (priority -100) has built every language
def on_post_build(config: MkDocsConfig) -> None:
    """Index the whole built site (both languages) for search, once per build; drop the
    sitemap while the site has no public address."""
    if _nested(config):
        return  # a language build nested in the main one: the main build indexes everything
    state = _state()
    tool_runtime.write_runtime(state.runtime, Path(config["site_dir"]))
    if not config["site_url"]:
        # A sitemap lists absolute URLs: without $PYTORCH_TIPS_SITE_URL it would list
        # "None..." addresses, so there is none.
        for name in ("sitemap.xml", "sitemap.xml.gz"):
            (Path(config["site_dir"]) / name).unlink(missing_ok=True)
    try:
        sitesearch.build_index(Path(config["site_dir"]))
    except UserError as err:
        raise PluginError(str(err)) from None
    sitesearch.write_directory(
        Path(config["site_dir"]), {k: v.values() for k, v in state.directory.items()}
    )


@event_priority(-200)  # after mkdocs-static-i18n (priority -100) has built the language's nav
def on_nav(navigation: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
    i18n = config.plugins.get("i18n")
    if i18n is None or getattr(i18n, "current_language", "en") != "zh":
        return navigation

    zh = _zh_sections()

    def translate(items: list[Any]) -> None:
        for item in items:
            if isinstance(item, Section):
                item.title = zh.get(item.title, item.title)
                translate(item.children)

    translate(navigation.items)
    return navigation


def on_serve(
    server: LiveReloadServer, config: MkDocsConfig, builder: Callable[..., Any]
) -> LiveReloadServer:
    server.watch(str(paths.TIPS))
    return server
