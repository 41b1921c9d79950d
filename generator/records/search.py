"""Ranked full-text search over the tips, in English and Chinese.

Ranking is SQLite FTS5's BM25 (from the standard library), with titles weighted above
summaries, tags, code and prose. Like the site's search, the tags column also holds the
names and search words of the problems that list a tip (``tips/_problems.yaml``). English text goes through the Porter stemmer and keeps
``_`` inside tokens, so ``no_grad`` and ``set_to_none`` match as API names. Chinese text has
no spaces between words, so it is segmented with jieba before indexing, and so is the query.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from generator.records.schema import Tip
from generator.records.taxonomy import CATEGORIES, TAGS

_CJK = re.compile(r"[\u3400-\u9fff]")
_COLUMNS = ("id", "title", "summary", "tags", "code", "body")
#: BM25 weight per column, in the order of _COLUMNS. The id is a concise summary of the tip
#: (``gradient-accumulation``), so it weighs as much as the title.
_WEIGHTS = (10.0, 10.0, 5.0, 4.0, 2.0, 1.0)


@dataclass(frozen=True)
class Hit:
    """One search result."""

    id: str
    title: str
    summary: str
    score: float


def detect_lang(query: str) -> str:
    """``zh`` if the query contains Chinese characters, else ``en``."""
    return "zh" if _CJK.search(query) else "en"


def _segment(text: str) -> str:
    """Put spaces between Chinese words (jieba's search mode) so FTS5 sees words."""
    if not _CJK.search(text):
        return text
    import jieba  # imported lazily: it costs half a second and English search needs none of it

    jieba.setLogLevel(logging.WARNING)
    return " ".join(tok for tok in jieba.cut_for_search(text) if tok.strip())


def _row(tip: Tip, lang: str, extra: Sequence[str] = ()) -> tuple[str, ...]:
    prose = [tip.rationale.get(lang), *(c.get(lang) for c in tip.caveats)]
    for variant in tip.variants().values():
        if variant.explain:
            prose.append(variant.explain.get(lang))
    if tip.hardware.notes:
        prose.append(tip.hardware.notes.get(lang))
    if tip.no_code:
        prose.append(tip.no_code.get(lang))
    tags = [t for tag in tip.tags for t in (tag, TAGS[tag].en, TAGS[tag].get(lang))]
    tags += [tip.category, CATEGORIES[tip.category].get(lang)]
    tags += extra  # the problems that list the tip, as on the site (generator/site/search.py)
    code = "\n".join(v.code for v in tip.variants().values())
    fields = (
        (tip.id or "").replace("-", " "),
        tip.title.get(lang),
        tip.summary.get(lang),
        " ".join(tags),
        code,
        "\n".join(prose),
    )
    return tuple(_segment(f) if lang == "zh" else f for f in fields)


def problem_keywords(tips: Sequence[Tip], lang: str) -> dict[str, list[str]]:
    """For each tip id, the names and search words of the problems that list it (empty when
    ``tips/_problems.yaml`` does not load: search still works)."""
    from generator.errors import InvalidRecords
    from generator.records.problems import load_entry_points

    try:
        entry_points = load_entry_points(frozenset(str(t.id) for t in tips))
    except InvalidRecords:
        return {}
    return entry_points.keywords_by_tip(lang)


def _terms(query: str, lang: str) -> list[str]:
    text = _segment(query) if lang == "zh" else query
    return re.findall(r"[\w\u3400-\u9fff]+", text)


def _fts_queries(terms: list[str]) -> list[str]:
    """FTS5 queries from most to least specific: the phrase as the tip's id, in its title,
    all words anywhere, any word anywhere."""
    quoted = [f'"{t}"' for t in terms]
    phrase = '"' + " ".join(terms) + '"'
    return [f"id : ^{phrase}", f"title : {phrase}", " AND ".join(quoted), " OR ".join(quoted)]


def build_index(
    tips: Sequence[Tip], lang: str, keywords: Mapping[str, Sequence[str]] | None = None
) -> sqlite3.Connection:
    """An in-memory FTS5 index of ``tips`` in ``lang`` (``keywords``: more words to find
    each tip by, by tip id, such as the problems that list it)."""
    keywords = keywords or {}
    db = sqlite3.connect(":memory:")
    db.execute(
        f"CREATE VIRTUAL TABLE tips USING fts5({', '.join(_COLUMNS)}, "
        "tokenize = \"porter unicode61 remove_diacritics 2 tokenchars '_'\")"
    )
    db.executemany(
        f"INSERT INTO tips VALUES ({', '.join('?' * len(_COLUMNS))})",
        [_row(t, lang, keywords.get(str(t.id), ())) for t in tips],
    )
    return db


def search(
    tips: Sequence[Tip],
    query: str,
    lang: str = "auto",
    limit: int = 10,
    keywords: Mapping[str, Sequence[str]] | None = None,
) -> list[Hit]:
    """Rank ``tips`` for ``query``; best first, at most ``limit`` (``keywords``: see
    `build_index`; `problem_keywords` gives those the site uses).

    A tip whose id starts with the query comes first, then tips whose title holds it as a
    phrase, then tips containing every word, then tips containing any word, so a long
    natural-language query still finds something.
    """
    lang = detect_lang(query) if lang == "auto" else lang
    terms = _terms(query, lang)
    if not terms:
        return []
    db = build_index(tips, lang, keywords)
    weights = ", ".join(str(w) for w in _WEIGHTS)
    ranked: dict[int, float] = {}
    for match in _fts_queries(terms):
        rows = db.execute(
            f"SELECT rowid, bm25(tips, {weights}) AS score FROM tips WHERE tips MATCH ? "
            "ORDER BY score LIMIT ?",
            (match, limit),
        ).fetchall()
        for rowid, score in rows:
            ranked.setdefault(rowid, -score)
        if len(ranked) >= limit:
            break
    hits = []
    for rowid, score in list(ranked.items())[:limit]:
        tip = tips[rowid - 1]  # rowids follow insertion order, from 1
        hits.append(Hit(tip.id or "", tip.title.get(lang), tip.summary.get(lang), score))
    return hits
