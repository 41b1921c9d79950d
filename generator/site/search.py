"""The site's search: which pages Pagefind indexes, how, and the index build itself.

The site uses `Pagefind <https://pagefind.app>`_ rather than Material's lunr search: it
builds one index per ``<html lang>`` (an English page never lists Chinese results), stems
English (``accumulation`` finds ``accumulate``) and segments Chinese. The MkDocs hook calls
`mark_page` on every page's HTML and `build_index` once the whole site (both
languages) is written, so ``mkdocs build``, ``mkdocs serve`` and ``python -m generator build``
all ship a fresh index. ``docs/assets/search.js`` runs the queries in Material's search box.

What is indexed:

- tip pages (filter ``kind:tip``), and the guide pages of `GUIDE_PAGES` (``kind:guide``),
  which the search box lists after the tips; list pages (catalog, tags, categories, coverage,
  benchmarks, glossary, API reference) are left out, since they only repeat tip titles;
- in a tip page, every section except the boilerplate of `IGNORED_SECTIONS`; the
  summary, the id (as words: ``torch compile fusion``, weighed like the title, as in
  ``python -m generator search``) and a ``keywords`` field (tag and category names, and the
  names of the problems that list the tip, from ``tips/_problems.yaml``) are stored as
  metadata, which the search box shows and ranks by.

Each language gets its own Pagefind bundle (``pagefind/`` and ``zh/pagefind/``), so the two
indexes never mix.

Chinese: Pagefind segments a Chinese page with jieba when indexing, but a query with the
browser's ``Intl.Segmenter``, which splits words its dictionary lacks (显存, 加载, 计时) into
single characters that then match nothing (Pagefind issue #1237). Each Chinese page therefore
also indexes its Chinese characters one by one, in a hidden block, so that both segmentations
find it. (Segmenting queries with the index's own words instead, and keeping Pagefind from
re-segmenting them, ranked no better on the query set of ``tests/search_queries.yaml`` and
cost two seconds of jieba per build.)

API names: Pagefind indexes ``torch.no_grad()`` as one word, ``torchno_grad``, which a search
for ``no_grad`` does not find. Each page therefore also indexes the parts of its dotted names
(``torch no_grad``), in a hidden block.
"""

from __future__ import annotations

import html as html_lib
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from generator.errors import UserError
from generator.records.render import plain_text
from generator.records.schema import Tip
from generator.records.taxonomy import CATEGORIES, TAGS

#: Hand-written pages that are indexed, after the tips (source paths without language suffix).
GUIDE_PAGES = ("usage.md", "composer.md", "contributing.md", "lint.md", "checklist.md")

#: Prefixes of generated pages that are indexed as guides (one page per problem, one page per
#: lint rule, found by its code).
GUIDE_PREFIXES = ("problems/", "lint/rules/")

#: Sections of a tip page left out of the index: identical boilerplate on every page, or the
#: titles of other tips, which would make a tip match its neighbours' words.
IGNORED_SECTIONS = ("tested-on", "related")

#: Selectors Pagefind skips everywhere: heading permalinks (the pilcrow).
EXCLUDE_SELECTORS = (".headerlink",)

#: The folder of each language's pages in the built site; each gets its own bundle.
LANGUAGE_DIRS = {"en": "", "zh": "zh"}

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_H2 = re.compile(r'(?=<h2 id="([^"]+)")')
_TAG = re.compile(r"<[^>]+>")
_PRE = re.compile(r"<pre\b.*?</pre>", re.S)
_DOTTED = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+")


def page_kind(src_uri: str) -> str | None:
    """``tip``, ``guide`` or ``None`` (not indexed) for a page's source path.

    >>> page_kind("tips/channels-last.zh.md"), page_kind("usage.md"), page_kind("tags.md")
    ('tip', 'guide', None)
    """
    path = re.sub(r"\.zh\.md$", ".md", src_uri)
    if path.startswith("tips/"):
        return "tip"
    if path in GUIDE_PAGES or path.startswith(GUIDE_PREFIXES):
        return "guide"
    return None


def plain(text: str) -> str:
    """Markdown inline text as plain text (no code backticks), on one line."""
    return " ".join(plain_text(text).split())


def _without_sections(html: str, ignored: Iterable[str]) -> str:
    """``html`` with each ``<h2 id=X>`` section whose X is in ``ignored`` marked
    ``data-pagefind-ignore`` (a section runs to the next ``<h2>``)."""
    ignored = set(ignored)
    parts = _H2.split(html)
    # re.split with a capturing lookahead yields [head, id1, section1, id2, section2, ...].
    out = [parts[0]]
    for section_id, section in zip(parts[1::2], parts[2::2], strict=True):
        if section_id in ignored:
            out.append(f"<div data-pagefind-ignore>{section}</div>")
        else:
            out.append(section)
    return "".join(out)


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
        summary: for a tip, its one-line summary, shown under the title in the results.
        keywords: for a tip, words it should be found by that its text may not contain.
        tip_id: for a tip, its id, indexed as words (``torch-compile-fusion`` as
            ``torch compile fusion``).

    Returns:
        ``html`` unchanged for a page that is not indexed, else ``html`` inside a
        ``data-pagefind-body`` element with its ``kind`` filter and metadata.
    """
    kind = page_kind(src_uri)
    if kind is None:
        return html
    if kind == "tip":
        html = _without_sections(html, IGNORED_SECTIONS)
    hidden = []
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
    extra = f"<div hidden data-pagefind-ignore>{''.join(hidden)}</div>" if hidden else ""
    parts = dotted_parts(html)
    if parts:
        extra += f'<div hidden data-pagefind-weight="0.5">{html_lib.escape(parts)}</div>'
    if lang == "zh":
        chars = chinese_characters(html)
        if chars:
            extra += f'<div hidden data-pagefind-weight="0.5">{chars}</div>'
    return f'<div data-pagefind-body data-pagefind-filter="kind:{kind}">{html}{extra}</div>'


def tip_keywords(tip: Tip, lang: str, problem_words: Iterable[str] = ()) -> list[str]:
    """What a tip is found by besides its text: its tag and category names, the names and
    search words of the problems that list it, and, in Chinese, the variants the glossary
    avoids for the terms the tip uses (a page saying 图中断 is also found by 图断裂).
    """
    words = [TAGS[tag].get(lang) for tag in tip.tags]
    words.append(CATEGORIES[tip.category].get(lang))
    words += problem_words
    if lang == "zh":
        from generator.records.glossary import chinese_texts, load_glossary, prose

        text = " ".join(prose(t) for _, t in chinese_texts(tip))
        for term in load_glossary().terms:
            if term.zh in text:
                words += term.avoid
    return list(dict.fromkeys(w for w in words if w.strip()))


def indexed_glob() -> str:
    """The Pagefind glob of the indexed pages of one language folder."""
    names = ["tips", *(p.rstrip("/") for p in GUIDE_PREFIXES)]
    names += [p.removesuffix(".md") for p in GUIDE_PAGES]
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
    cmd += ["--glob", indexed_glob()]
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
