"""Ranked full-text search over the site's pages, in English and Chinese, from the terminal.

The documents are the pages the site's search box finds (`generator.site.search`): the tips,
the problem pages, the checklist and the pages of ``tips/_pages.yaml`` (`record_documents`),
and the lint rules (`generator.lint.docs.search_documents`); ``python -m generator search``
gathers them all. Each hit names its site page (``tips/gradient-accumulation/``,
``composer/``) and, for a tool, the command that does its job.

Ranking is SQLite FTS5's BM25 (from the standard library) over one OR query of the query's
terms, with titles and a page's own words weighted above keywords, summaries, code and prose,
so an extra word ("low GPU utilization") adds to the pages that have it and drops none that
lack it. Before the ranked pages come the best matches: the pages whose title or own words
share most of their terms with the query, or a problem page whose title or search phrase the
query holds whole, as in the site's "best match" row (`BestMatches`, its phrases built once
per index). A query is read by `generator.records.query`: capped, with the glossary's
synonyms; a term with a digit matches only itself there (PTT038 is no PTT001).

English text goes through the Porter stemmer and keeps ``_`` inside tokens, so ``no_grad``
and ``set_to_none`` match as API names; each page also holds the other spelling of its
British or American words (`generator.records.terms`). Chinese has no spaces between words:
each run of Chinese characters is indexed, and queried, as its characters and its pairs of
characters (显存不足: 显 存 不 足 显存 存不 不足), which needs no dictionary and finds a word
wherever it occurs.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from generator.records.problems import EntryPoints
from generator.records.query import chinese_terms, query_terms, read_query, synonyms
from generator.records.schema import Tip
from generator.records.taxonomy import CATEGORIES, TAGS
from generator.records.terms import respelled, variants

_CJK = re.compile(r"[\u3400-\u9fff]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
#: The two tables of the index, as on the site: a page's fields (its own words, title,
#: summary, keywords) and its text (code and prose), each ranked with BM25 on its own, since
#: FTS5 normalises by the length of the whole row, and long prose would drown a title.
_FIELDS = ("own", "title", "summary", "keywords")
_TEXT = ("code", "body")
#: BM25 weight per column. A page's own words (a tip's id as words, a problem's or a tool's
#: search words) are a concise summary of it: weighed like the title.
_FIELD_WEIGHTS = (3.0, 3.0, 1.0, 2.0)
_TEXT_WEIGHTS = (1.0, 1.0)
#: The pages that are tools, by page key (``tips/_pages.yaml``), with the pages below them
#: (``lint/playground``; a lint rule's page is a ``rule``): kind ``tool`` in both engines
#: (`is_tool_page`, and `generator.site.search.page_kind` on the site).
TOOL_PAGES = ("composer", "lint", "doctor")


def is_tool_page(key: str) -> bool:
    """Whether the page ``key`` (``doctor``, ``lint/playground``) is one of `TOOL_PAGES`."""
    return any(key == tool or key.startswith(tool + "/") for tool in TOOL_PAGES)


#: The share of terms a best match has in common with the query (over all terms of both).
BEST = 0.6
#: The weight of the text against the fields, and of a page holding every term (measured
#: on tests/site/search_queries.yaml, as the site's weights).
TEXT = 0.7
WHOLE = 0.5


@dataclass(frozen=True)
class Document:
    """One searchable page, in one language."""

    page: str  # the site page, relative to the language root: "tips/x/", "composer/"
    kind: str  # tip, problem, tool, rule, guide (as on the site)
    title: str
    summary: str = ""
    own: tuple[str, ...] = ()  # the page's own words: the best-match row looks at these
    # A tip's words from the problems it lists first: own words, ranked after the problem's.
    lead: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    code: str = ""
    body: str = ""
    command: str | None = None  # the `python -m generator` command that does a tool's job
    id: str = field(default="")  # a tip's id, a rule's code


@dataclass(frozen=True)
class Hit:
    """One search result."""

    id: str
    title: str
    summary: str
    score: float
    page: str = ""
    kind: str = "tip"
    command: str | None = None
    best: bool = False


def detect_lang(query: str) -> str:
    """``zh`` if the query contains Chinese characters, else ``en``."""
    return "zh" if _CJK.search(query) else "en"


def _segment(text: str) -> str:
    """``text`` with each run of Chinese characters written as its terms, separated by
    spaces, so FTS5 sees them as words."""
    if not _CJK.search(text):
        return text
    return _CJK_RUN.sub(lambda m: " " + " ".join(chinese_terms(m.group())) + " ", text)


def _stem(word: str) -> str:
    """A crude stem, to compare a query's words with a title's (accumulate ~ accumulation):
    the word without a common ending."""
    for ending in ("ations", "ation", "ings", "ing", "ers", "er", "es", "ed", "s", "e"):
        if len(word) - len(ending) >= 4 and word.endswith(ending):
            return word[: -len(ending)]
    return word


_CODE = re.compile(r"([a-z]+)(\d+)")


def _key(term: str) -> str:
    """A term as the best-match row compares it: a word up to its ending; a term with a digit
    as it is (fp16 is no fp8), a code by its letters and number (ptt55 is ptt055)."""
    if not any(c.isdigit() for c in term):
        return _stem(term)
    code = _CODE.fullmatch(term)
    return f"{code[1]}{code[2].lstrip('0') or '0'}" if code else term


def _keys(phrase: str) -> frozenset[str]:
    """The terms of a phrase as the best-match row compares them."""
    return frozenset(_key(t) for t in query_terms(phrase, limit=None))


def _shared(mine: frozenset[str], terms: frozenset[str]) -> float:
    """The share of terms the query (``mine``) and a phrase have in common (over all terms
    of both)."""
    if not terms:
        return 0.0
    shared = len(mine & terms)
    if len(terms) == 1 and shared and _CODE.fullmatch(next(iter(terms))):
        return 1.0  # a code (PTT011) names its page, whatever else the query holds
    return shared / (len(mine) + len(terms) - shared)


def _spelt(text: str) -> str:
    """``text``, and the other spelling of its words that have one."""
    others = variants(text)
    return f"{text} ; {' '.join(others)}" if others else text


def _rows(doc: Document, lang: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The document's fields and text, as indexed."""
    title, summary, body = doc.title, doc.summary, doc.body
    if doc.kind == "rule":
        # A rule's page answers a search for its code; for its message's words, the tip it
        # enforces is the better answer, and a short rule would outrank it.
        title, summary, body = "", "", "\n".join([doc.title, doc.summary, doc.body])
    fields = (" ; ".join(doc.own), title, summary, " ; ".join(doc.keywords))
    text = (doc.code, "\n".join([title, summary, body]))  # the page's text, as Pagefind's
    seg = _segment if lang == "zh" else str
    return tuple(seg(_spelt(f)) for f in fields), tuple(seg(_spelt(t)) for t in text)


def build_index(docs: Sequence[Document], lang: str) -> sqlite3.Connection:
    """An in-memory FTS5 index of ``docs`` in ``lang``: the tables ``fields`` and ``text``,
    one row per document, in order."""
    db = sqlite3.connect(":memory:")
    tokenize = "tokenize = \"porter unicode61 remove_diacritics 2 tokenchars '_'\""
    rows = [_rows(d, lang) for d in docs]
    for i, (table, columns) in enumerate((("fields", _FIELDS), ("text", _TEXT))):
        db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5({', '.join(columns)}, {tokenize})")
        marks = ", ".join("?" * len(columns))
        db.executemany(f"INSERT INTO {table} VALUES ({marks})", [r[i] for r in rows])
    return db


def _scores(
    db: sqlite3.Connection, table: str, weights: Sequence[float], terms: list[str]
) -> dict[int, float]:
    """BM25 of each row of ``table`` holding any of the terms, plus `WHOLE` times its BM25
    again if it holds them all, relative to the best row."""
    sql = (
        f"SELECT rowid, -bm25({table}, {', '.join(map(str, weights))}) FROM {table} "
        f"WHERE {table} MATCH ?"
    )
    quoted = [f'"{t}"' for t in terms]
    scores = dict(db.execute(sql, (" OR ".join(quoted),)).fetchall())
    if len(quoted) > 1 and WHOLE:
        for rowid, score in db.execute(sql, (" AND ".join(quoted),)).fetchall():
            scores[rowid] += WHOLE * score
    top = max(scores.values(), default=0.0) or 1.0
    return {rowid: score / top for rowid, score in scores.items()}


def _phrases(phrases: Iterable[str]) -> list[str]:
    """``phrases``, each also in its other spelling where it has one."""
    out = list(phrases)
    return out + [r for p in out if (r := respelled(p))]


#: Containment: a problem page is a best match when the query holds every term of its title
#: or of one of its search phrases, of at least this many terms ("training is slow on one GPU"
#: names "Training is slow", "RuntimeError: CUDA out of memory" names "CUDA out of memory"; a
#: lone "OOM" does not); and a problem's first tip too when the phrase is at least half of the
#: query ("set random seed": "random seed"), not when the query says much more.
CONTAINED = 2


class BestMatches:
    """The best-match row over ``docs``: each page's phrases as sets of terms, built once."""

    def __init__(self, docs: Sequence[Document]) -> None:
        def keys(phrases: Iterable[str]) -> list[frozenset[str]]:
            return [k for p in _phrases(phrases) if (k := _keys(p))]

        self.own = [keys((d.title, *d.own)) for d in docs]
        self.lead = [keys(d.lead) for d in docs]
        self.problem = [d.kind == "problem" for d in docs]

    def find(self, terms: Sequence[str], most: int = 2) -> list[int]:
        """The indexes of the documents whose title or own words (a tip's ``lead`` words
        included) share at least `BEST` of their terms with the query, or that it names
        (`CONTAINED`): the highest share only, at most ``most``; a page matched by its own
        words before a tip matched by the problem it leads (the problem page, then its first
        tip)."""
        mine = frozenset(_key(t) for t in terms)

        def share(phrases: list[frozenset[str]]) -> float:
            return max((_shared(mine, p) for p in phrases), default=0.0)

        def held(phrases: list[frozenset[str]], half: bool = False) -> bool:
            return any(
                len(p) >= CONTAINED and p <= mine and (not half or 2 * len(p) >= len(mine))
                for p in phrases
            )

        own = [
            1.0 if problem and held(phrases) else share(phrases)
            for phrases, problem in zip(self.own, self.problem, strict=True)
        ]
        shares = [
            max(o, 1.0 if held(lead, half=True) else share(lead))
            for o, lead in zip(own, self.lead, strict=True)
        ]
        top = max(shares, default=0.0)
        if top < BEST:
            return []
        tied = [i for i, s in enumerate(shares) if s == top]
        return sorted(tied, key=lambda i: own[i] < top)[:most]


class Index:
    """``docs`` indexed in ``lang``, ready for any number of queries."""

    def __init__(self, docs: Sequence[Document], lang: str) -> None:
        self.docs = list(docs)
        self.lang = lang
        self.db = build_index(self.docs, lang)
        self.best = BestMatches(self.docs)
        self.synonyms = synonyms(lang)

    def terms(self, query: str) -> list[str]:
        """The terms ``query`` is ranked by (`generator.records.query.read_query`)."""
        return read_query(query, self.synonyms)

    def search(self, query: str, limit: int | None = 10) -> list[Hit]:
        """Rank the documents for ``query``: the best matches first, then every document
        holding a query term, best first; at most ``limit`` (``None``: all)."""
        terms = self.terms(query)
        if not terms:
            return []
        fields = _scores(self.db, "fields", _FIELD_WEIGHTS, terms)
        text = _scores(self.db, "text", _TEXT_WEIGHTS, terms)
        scores = {r: fields.get(r, 0.0) + TEXT * text.get(r, 0.0) for r in {*fields, *text}}
        best = self.best.find(terms)
        order = [(i, 0.0, True) for i in best]
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        order += [(rowid - 1, score, False) for rowid, score in ranked if rowid - 1 not in best]
        hits = []
        for i, score, is_best in order[:limit]:
            d = self.docs[i]
            hits.append(Hit(d.id, d.title, d.summary, score, d.page, d.kind, d.command, is_best))
        return hits


def search_documents(
    docs: Sequence[Document], query: str, lang: str = "auto", limit: int | None = 10
) -> list[Hit]:
    """Rank ``docs`` for ``query`` in ``lang`` (see `Index.search`)."""
    lang = detect_lang(query) if lang == "auto" else lang
    return Index(docs, lang).search(query, limit)


def tip_document(
    tip: Tip, lang: str, problem_words: Iterable[str] = (), lead: Iterable[str] = ()
) -> Document:
    """A tip as a searchable document: its prose, code, tags and the problems that list it.
    ``lead``: the words of the problems the tip leads (lists first), which are also its own
    words: a query naming the problem has the problem page and its first tip as best matches."""
    lead = tuple(lead)
    prose = [tip.rationale.get(lang), *(c.get(lang) for c in tip.caveats)]
    for variant in tip.variants().values():
        if variant.explain:
            prose.append(variant.explain.get(lang))
    if tip.hardware.notes:
        prose.append(tip.hardware.notes.get(lang))
    if tip.no_code:
        prose.append(tip.no_code.get(lang))
    tags = [t for tag in tip.tags for t in dict.fromkeys((tag, TAGS[tag].en, TAGS[tag].get(lang)))]
    tags += [tip.category, CATEGORIES[tip.category].get(lang), *tip.lint, *problem_words, *lead]
    tip_id = str(tip.id or "")
    return Document(
        page=f"tips/{tip_id}/",
        kind="tip",
        title=tip.title.get(lang),
        summary=tip.summary.get(lang),
        own=(tip_id.replace("-", " "),),
        lead=lead,
        keywords=tuple(t for t in tags if t),  # a problem's first tip has its words twice
        code="\n".join(v.code for v in tip.variants().values()),
        body="\n".join(prose),
        id=tip_id,
    )


def record_documents(
    tips: Sequence[Tip], entry_points: EntryPoints | None, lang: str
) -> list[Document]:
    """The documents the records give: every tip, and, when the entry points load, every
    problem page, the checklist and the pages of ``tips/_pages.yaml``."""
    words = entry_points.keywords_by_tip(lang) if entry_points else {}
    lead = entry_points.keywords_by_tip(lang, first=1) if entry_points else {}
    docs = [tip_document(t, lang, words.get(str(t.id), []), lead.get(str(t.id), [])) for t in tips]
    if entry_points is None:
        return docs
    titles = {str(t.id): t.title.get(lang) for t in tips}
    for slug, entry in entry_points.problems.items():
        docs.append(
            Document(
                page=f"problems/{slug}/",
                kind="problem",
                title=entry.title.get(lang),
                summary=entry.intro.get(lang),
                own=tuple(entry.keywords.get(lang)),
                keywords=tuple(entry.keywords.get(lang)),
                body="\n".join(line.when.get(lang) for line in entry.triage),  # as the page's
                id=slug,
            )
        )
    checklist = entry_points.checklist
    docs.append(
        Document(
            page="checklist/",
            kind="guide",
            title=checklist.title.get(lang),
            summary=checklist.intro.get(lang),
            own=tuple(checklist.keywords.get(lang)) if checklist.keywords else (),
            keywords=tuple(titles.get(c.tip, c.tip) for c in checklist.checks),
            body="\n".join(c.check.get(lang) for c in checklist.checks),
            id="checklist",
        )
    )
    for path, page in entry_points.pages.items():
        docs.append(
            Document(
                page=f"{path}/",
                kind="tool" if is_tool_page(path) else "guide",
                title=page.title.get(lang),
                summary=page.summary.get(lang),
                own=tuple(page.keywords.get(lang)),
                keywords=tuple(page.keywords.get(lang)),
                command=page.command,
                id=path,
            )
        )
    return docs


def search(
    tips: Sequence[Tip],
    query: str,
    lang: str = "auto",
    limit: int = 10,
    keywords: Mapping[str, Sequence[str]] | None = None,
) -> list[Hit]:
    """Rank ``tips`` alone for ``query`` (``keywords``: more words to find each tip by, by
    tip id, such as the problems that list it); see `search_documents`."""
    lang = detect_lang(query) if lang == "auto" else lang
    keywords = keywords or {}
    docs = [tip_document(t, lang, keywords.get(str(t.id), ())) for t in tips]
    return search_documents(docs, query, lang, limit)
