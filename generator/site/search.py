"""The site's search: which pages Pagefind indexes, how, and the index build itself.

The site uses `Pagefind <https://pagefind.app>`_ rather than Material's lunr search: it
builds one index per ``<html lang>`` (an English page never lists Chinese results), stems
English (``accumulation`` finds ``accumulate``) and segments Chinese. The MkDocs hook calls
`mark_page` on every page's HTML and `build_index` once the whole site (both
languages) is written, so ``mkdocs build``, ``mkdocs serve`` and ``python -m generator build``
all ship a fresh index. ``docs/assets/search.js`` runs the queries in Material's search box.

What is indexed: every page except the list pages of `NOT_INDEXED` (catalog, tags,
categories, coverage, benchmarks, glossary, API reference, home), which only repeat tip
titles. Each indexed page carries its kind (`page_kind`: tip, problem, tool, rule, guide) as
a meta field, so any new page (a lint rule's page, a playground) is found with no change
here. Search ranks all kinds together. Not as a Pagefind filter: Pagefind writes its filter
indexes (``filter/*.pf_filter``, and their names in the bundle's meta and entry files) in
hash-map order, which changes from run to run, so two builds of one tree would differ; with
no filter, the index is the same bytes every time (tests/site/test_reproducible.py).

- In a tip page, every section except the boilerplate of `IGNORED_SECTIONS` is indexed; the
  summary, the id (as words: ``torch compile fusion``, weighed like the title, as in
  ``python -m generator search``) and a ``keywords`` field (tag and category names, the
  problems that list the tip) are metadata, which the search box shows and
  ranks by.
- Other pages carry a summary and keywords from ``tips/_problems.yaml``,
  ``tips/_checklist.yaml`` and ``tips/_pages.yaml`` (a lint rule's page: its code).
- The "best match" row: each language bundle also holds ``best-bets.json``, every indexed page's
  title and own search words (`best_bet`), which the search box matches against the whole
  query. A tip's own words are its title and id, not the problems it shares with others.

Each language gets its own Pagefind bundle (``pagefind/`` and ``zh/pagefind/``), so the two
indexes never mix.

Chinese: Pagefind segments a Chinese page with jieba when indexing, but a query with the
browser's ``Intl.Segmenter``, which splits words its dictionary lacks (显存, 加载, 计时) into
single characters that then match nothing (Pagefind issue #1237). Each Chinese page therefore
also indexes its Chinese characters one by one, in a hidden block, so that both segmentations
find it.

API names: Pagefind indexes ``torch.no_grad()`` as one word, ``torchno_grad``, which a search
for ``no_grad`` does not find. Each page therefore also indexes the parts of its dotted names
(``torch no_grad``), in a hidden block. Spelling: the same block holds the other spelling of
its British or American words (`generator.records.terms`), so *utilization* finds a page
that says *utilisation*.
"""

from __future__ import annotations

import html as html_lib
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from generator.errors import UserError
from generator.records.query import directory_data
from generator.records.render import plain_text
from generator.records.schema import Tip
from generator.records.search import is_tool_page
from generator.records.taxonomy import CATEGORIES, TAGS
from generator.records.terms import respelled, variants

#: Pages left out of the index (source paths without language suffix; a trailing ``/`` is a
#: folder): lists that repeat tip titles, and the home page.
NOT_INDEXED = (
    "index.md",
    "catalog.md",
    "tags.md",
    "coverage.md",
    "benchmarks.md",
    "glossary.md",
    "categories/",
    "reference/",
)

#: The kind of a page by its path (first match wins); then a tool (`is_tool_page`), and
#: anything else is a ``guide``.
KINDS = (
    ("tips/", "tip"),
    ("problems/", "problem"),
    ("lint/rules/", "rule"),
)

#: Sections of a tip page left out of the index: boilerplate that many pages share (how the
#: benchmark timed, where the snippets run), or the titles of other tips, which would make a
#: tip match its neighbours' words.
IGNORED_SECTIONS = ("measured", "tested-on", "related")

#: Selectors Pagefind skips everywhere: heading permalinks (the pilcrow).
EXCLUDE_SELECTORS = (".headerlink",)

#: The folder of each language's pages in the built site; each gets its own bundle.
LANGUAGE_DIRS = {"en": "", "zh": "zh"}

#: The page directory written into each language's bundle (see `write_directory`).
DIRECTORY = "pages.json"

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_H2 = re.compile(r'(?=<h2 id="([^"]+)")')
_TAG = re.compile(r"<[^>]+>")
_PRE = re.compile(r"<pre\b.*?</pre>", re.S)
_DOTTED = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+")
#: A block a template marked ``data-pagefind-ignore`` (holding no nested ``div``).
_IGNORED_DIV = re.compile(r"<div data-pagefind-ignore>(?:(?!<div\b).)*?</div>", re.S)


def source_path(src_uri: str) -> str:
    """A page's source path without its language suffix: ``tips/x.zh.md`` -> ``tips/x.md``."""
    return re.sub(r"\.zh\.md$", ".md", src_uri)


def page_kind(src_uri: str) -> str | None:
    """``tip``, ``problem``, ``rule``, ``tool``, ``guide`` or ``None`` (not indexed) for a
    page's source path.

    >>> page_kind("tips/channels-last.zh.md"), page_kind("lint/rules/PTT020.md")
    ('tip', 'rule')
    >>> page_kind("usage.md"), page_kind("composer.zh.md"), page_kind("tags.md")
    ('guide', 'tool', None)
    >>> page_kind("doctor.md"), page_kind("lint/playground/index.md")
    ('tool', 'tool')
    """
    path = source_path(src_uri)
    if any(path == p or (p.endswith("/") and path.startswith(p)) for p in NOT_INDEXED):
        return None
    kind = next((kind for prefix, kind in KINDS if path.startswith(prefix)), None)
    return kind or ("tool" if is_tool_page(page_key(src_uri)) else "guide")


def page_key(src_uri: str) -> str:
    """The key of a page in ``tips/_pages.yaml``: its path without ``.md``, language suffix
    or ``/index`` (``lint/playground/index.zh.md`` -> ``lint/playground``)."""
    return source_path(src_uri).removesuffix(".md").removesuffix("/index")


def rule_code(src_uri: str) -> str | None:
    """The lint rule code of a rule page (``lint/rules/ptt020.md`` -> ``PTT020``), else None."""
    match = re.fullmatch(r"lint/rules/([A-Za-z]+\d+)(?:/index)?\.md", source_path(src_uri))
    return match.group(1).upper() if match else None


def plain(text: str) -> str:
    """Markdown inline text as plain text (no backticks, emphasis or links), on one line."""
    return " ".join(plain_text(text).split())


def _without_sections(html: str, ignored: Iterable[str]) -> tuple[str, str]:
    """``html`` with each ``<h2 id=X>`` section whose X is in ``ignored`` marked
    ``data-pagefind-ignore`` (a section runs to the next ``<h2>``), and ``html`` without
    those sections."""
    ignored = set(ignored)
    parts = _H2.split(html)
    # re.split with a capturing lookahead yields [head, id1, section1, id2, section2, ...].
    out, kept = [parts[0]], [parts[0]]
    for section_id, section in zip(parts[1::2], parts[2::2], strict=True):
        if section_id in ignored:
            out.append(f"<div data-pagefind-ignore>{section}</div>")
        else:
            out.append(section)
            kept.append(section)
    return "".join(out), "".join(kept)


def _text(html: str, code: bool = False) -> str:
    """The text of ``html`` (without code blocks unless ``code``)."""
    return html_lib.unescape(_TAG.sub(" ", html if code else _PRE.sub(" ", html)))


def chinese_characters(html: str) -> str:
    """The Chinese characters of ``html`` outside code blocks, separated by spaces."""
    return " ".join(_CJK.findall(_text(html)))


def dotted_parts(html: str) -> str:
    """The parts of the dotted names in ``html``, code included, separated by spaces:
    ``torch.no_grad()`` gives ``torch no_grad``."""
    return " ".join(
        part for name in _DOTTED.findall(_text(html, code=True)) for part in name.split(".")
    )


def mark_page(
    html: str,
    src_uri: str,
    lang: str,
    summary: str | None = None,
    keywords: Iterable[str] = (),
    tip_id: str | None = None,
) -> str:
    """The content HTML of a page, marked up for Pagefind.

    Args:
        html: the page content as MkDocs rendered it (``on_page_content``).
        src_uri: the page's source path, such as ``tips/channels-last.zh.md``.
        lang: the page language, ``en`` or ``zh``.
        summary: one line shown under the title in the results (Markdown allowed).
        keywords: words the page should be found by that its text may not contain.
        tip_id: for a tip, its id, indexed as words (``torch-compile-fusion`` as
            ``torch compile fusion``).

    Returns:
        ``html`` unchanged for a page that is not indexed, else ``html`` inside a
        ``data-pagefind-body`` element with its ``kind`` and other metadata.
    """
    kind = page_kind(src_uri)
    if kind is None:
        return html
    indexed = html
    if kind == "tip":
        html, indexed = _without_sections(html, IGNORED_SECTIONS)
    # The hidden blocks below repeat only indexed text (not a template's ignored list).
    indexed = _IGNORED_DIV.sub(" ", indexed)
    hidden = [f'<span data-pagefind-meta="kind">{kind}</span>']
    if tip_id:
        hidden.append(
            f'<span data-pagefind-meta="id">{html_lib.escape(tip_id.replace("-", " "))}</span>'
        )
    if summary:
        hidden.append(
            f'<span data-pagefind-meta="summary">{html_lib.escape(plain(summary))}</span>'
        )
    words = [plain(k).replace(";", " ") for k in keywords if k.strip()]
    if words:
        hidden.append(
            f'<span data-pagefind-meta="keywords">{html_lib.escape("; ".join(words))}</span>'
        )
    extra = f"<div hidden data-pagefind-ignore>{''.join(hidden)}</div>"
    # The keywords as text too: a phrase search ("多卡") matches text, not metadata.
    keyword_html = "".join(f"<p>{html_lib.escape(w)}</p>" for w in words)
    if keyword_html:
        extra += f"<div hidden>{keyword_html}</div>"
    parts = dotted_parts(indexed)
    others = " ".join(variants([_text(indexed), *words, summary or ""]))
    if parts or others:
        extra += (
            f'<div hidden data-pagefind-weight="0.5">{html_lib.escape(f"{parts} {others}")}</div>'
        )
    if lang == "zh":
        chars = chinese_characters(indexed + keyword_html)
        if chars:
            extra += f'<div hidden data-pagefind-weight="0.5">{chars}</div>'
    return f'<div data-pagefind-body data-pagefind-meta="kind:{kind}">{html}{extra}</div>'


def tip_keywords(tip: Tip, lang: str, problem_words: Iterable[str] = ()) -> list[str]:
    """What a tip is found by besides its text: its tag and category names, and the names and
    search words of the problems that list it. (The glossary's variants, 梯度累加 for
    梯度累积, are read as the term on the query's side: `generator.records.query`.)
    """
    words = [TAGS[tag].get(lang) for tag in tip.tags]
    words.append(CATEGORIES[tip.category].get(lang))
    words += problem_words
    return list(dict.fromkeys(w for w in words if w.strip()))


#: A problem's search words lead to the tips it lists first (its reading order): how many.
LEADING_TIPS = 1


def directory_entry(
    url: str,
    title: str,
    kind: str,
    words: Iterable[str] = (),
    summary: str | None = None,
    keywords: Iterable[str] = (),
    lead: Iterable[str] = (),
) -> dict[str, object]:
    """One entry of the page directory: a page's address (relative to its language root),
    title, kind and summary; its own search words (``words``: its title's peers, for the
    best-match row), all its keywords (``keys``) and the problem words it leads (``lead``:
    the problems that list it among their first `LEADING_TIPS`), each phrase also in its
    other spelling."""

    def spelt(phrases: Iterable[str]) -> list[str]:
        out = [plain(p) for p in phrases if p.strip()]
        return list(dict.fromkeys(out + [r for p in out if (r := respelled(p))]))

    entry: dict[str, object] = {
        "url": url,
        "title": plain(title),
        "kind": kind,
        "words": spelt([*words, *([r] if (r := respelled(plain(title))) else [])]),
        "keys": spelt(keywords),
        "lead": spelt(lead),
    }
    if summary:
        entry["summary"] = plain(summary)
    return entry


def fragment_ids(bundle: Path) -> dict[str, str]:
    """Pagefind's id of each indexed page of ``bundle``, by address relative to the language
    root. The id is the name of the page's fragment file, a gzipped ``pagefind_dcd`` + JSON
    record holding its ``url``; the search box uses it to tell the best bets among Pagefind's
    results without loading them."""
    import gzip

    ids = {}
    for path in (bundle / "fragment").glob("*.pf_fragment"):
        raw = gzip.decompress(path.read_bytes()).removeprefix(b"pagefind_dcd")
        ids[json.loads(raw)["url"].lstrip("/")] = path.name.removesuffix(".pf_fragment")
    return ids


def write_directory(site_dir: Path, entries: Mapping[str, Iterable[Mapping[str, object]]]) -> None:
    """Write each language's page directory into its Pagefind bundle, after the index: how
    the CLI reads a query (`generator.records.query.directory_data`: caps, stop words,
    synonyms) and the pages, each with the Pagefind id of its page."""
    for lang, folder in LANGUAGE_DIRS.items():
        bundle = (site_dir / folder if folder else site_dir) / "pagefind"
        if not bundle.is_dir():
            continue
        ids = fragment_ids(bundle)
        pages = [
            {**entry, "id": ids.get(str(entry["url"]))}
            for entry in sorted(entries.get(lang, ()), key=lambda e: str(e["url"]))
        ]
        data = {**directory_data(lang), "pages": pages}
        (bundle / DIRECTORY).write_text(
            json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8"
        )


def indexed_glob(root: Path) -> str:
    """The Pagefind glob of one language folder's pages: every folder of it except the other
    languages' (pages that are not indexed carry no ``data-pagefind-body`` and are skipped)."""
    skip = {d for d in LANGUAGE_DIRS.values() if d} | {"assets", "pagefind", "search"}
    names = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name not in skip)
    return "{" + ",".join(names) + "}/**/*.html"


def build_index(site_dir: Path) -> None:
    """Index the built site at ``site_dir`` with Pagefind: one bundle per language
    (``pagefind/``, ``zh/pagefind/``), each holding only that language's pages.

    Raises:
        UserError: Pagefind is not installed, or it failed.
    """
    for folder in LANGUAGE_DIRS.values():
        root = site_dir / folder if folder else site_dir
        if root.is_dir():
            _pagefind(root)


def _pagefind(root: Path) -> None:
    cmd = [sys.executable, "-m", "pagefind", "--site", str(root), "--quiet"]
    cmd += ["--glob", indexed_glob(root)]
    for selector in EXCLUDE_SELECTORS:
        cmd += ["--exclude-selectors", selector]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except OSError as err:  # pragma: no cover - sys.executable always exists
        raise UserError(f"cannot run Pagefind: {err}") from None
    if proc.returncode:
        output = (proc.stdout + proc.stderr).strip()
        if "No module named pagefind" in output:
            raise UserError(
                "Pagefind is not installed: run `pip install -e .` (pyproject.toml lists "
                "pagefind[extended])"
            )
        raise UserError(f"Pagefind failed (exit status {proc.returncode}):\n{output}")
