"""How both search engines read a query before they rank: its size cap, the glossary's
synonyms, and its terms. The CLI (`generator.records.search`) calls these functions; the
site's search box (``docs/assets/search.js``) does the same steps with the same data, which
each language's page directory carries (`directory_data`: the caps, the stop words and the
synonyms, with their regular expressions as written here).

Cap: a query is read to its first `MAX_CHARS` characters, and ranked by its first `MAX_TERMS`
distinct terms (in the order they appear). A pasted CUDA out-of-memory message (about 600
characters, 40 terms) is read whole; a megabyte of text costs no more than 2,000 characters.

Synonyms (`synonyms`): what users type for a concept that the pages name otherwise, from
``tips/_glossary.yaml``. In a Chinese search, a term's ``avoid`` variants, its English
``aliases`` and its English name lead to its Chinese term (梯度检查点 -> 激活重计算,
gradient checkpointing -> 激活重计算); in an English search, its ``aliases`` lead to its
English name (gradient checkpointing -> activation checkpointing). A variant written in
Chinese characters is replaced by the term: the pages never use it (``validate`` refuses it),
so its characters and pairs (梯度, 检查) would only match other concepts. A variant in Latin
letters stays and the term follows it (warmup -> warmup 预热), since code may use the word.
Longer phrases are matched first, and a phrase never overlaps another; a term with
``allow``/``allow_near`` words is left alone in a query that names one (Linux 内核).

Terms (`query_terms`): English words in lower case without stop words (unless nothing else
is left), and each run of Chinese characters as its characters and pairs of characters, in
the order they appear (显存爆了: 显 存 显存 爆 存爆; stop words cut out first).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from generator.records.terms import STOP_EN, STOP_ZH

#: The characters of a query that are read: the rest is ignored, in both engines.
MAX_CHARS = 2000
#: The distinct terms of a query that are ranked (the first ones): in both engines.
MAX_TERMS = 64

_CJK = re.compile(r"[\u3400-\u9fff]")
_TOKEN = re.compile(r"[A-Za-z0-9_]+|[\u3400-\u9fff]+")
_STOP_ZH = re.compile(STOP_ZH)
_LATIN = re.compile(r"^[A-Za-z][A-Za-z0-9 .\-]*$")
#: Characters escaped in a synonym's pattern: the same in Python's and JavaScript's syntax.
_SPECIAL = re.compile(r"([.*+?^${}()|\[\]\\/-])")


@dataclass(frozen=True)
class Synonym:
    """A phrase users type, and the term the pages use for its concept."""

    phrase: str  # lower case, as typed
    term: str  # lower case, as the pages say it
    pattern: str  # the phrase as a regular expression over the lower-cased query
    replace: bool  # Chinese: the phrase is replaced; Latin: it stays and the term follows
    unless: tuple[str, ...] = ()  # left alone in a query that names one of these

    def as_list(self) -> list[object]:
        """The synonym as the page directory holds it (`directory_data`)."""
        return [self.pattern, self.term, self.replace, list(self.unless)]


def _pattern(phrase: str) -> str:
    """A phrase as a pattern: a Latin phrase whole words only, any spaces between its words."""
    if _LATIN.match(phrase):
        body = r"\s*".join(_SPECIAL.sub(r"\\\1", w) for w in phrase.split())
        return rf"(?<![a-z0-9_]){body}(?![a-z0-9_])"
    return _SPECIAL.sub(r"\\\1", phrase)


def english_name(name: str) -> str:
    """A glossary term's English name without its parenthesis: ``activation checkpointing
    (recomputation)`` -> ``activation checkpointing``."""
    return " ".join(re.sub(r"\(.*\)", " ", name).split())


def build_synonyms(entries: Iterable[tuple[Sequence[str], str, Sequence[str]]]) -> list[Synonym]:
    """Synonyms from (phrases, term, unless) entries, longest phrase first; a phrase equal to
    its term is left out, and a phrase claimed by two terms keeps the first."""
    found: dict[str, Synonym] = {}
    for phrases, term, unless in entries:
        term = term.lower()
        for phrase in (p.lower().strip() for p in phrases):
            if phrase and phrase != term and phrase not in found:
                replace = bool(_CJK.search(phrase))
                found[phrase] = Synonym(phrase, term, _pattern(phrase), replace, tuple(unless))
    return sorted(found.values(), key=lambda s: (-len(s.phrase), s.phrase))


@functools.cache
def synonyms(lang: str) -> tuple[Synonym, ...]:
    """The glossary's synonyms for a search in ``lang`` (none when the glossary does not load:
    search still works)."""
    from generator.errors import InvalidRecords
    from generator.records.glossary import load_glossary

    try:
        terms = load_glossary().terms
    except InvalidRecords:
        return ()
    if lang == "zh":
        entries = [
            ([*t.avoid, *t.aliases, english_name(t.en)], t.zh, [*t.allow, *t.allow_near])
            for t in terms
        ]
    else:
        entries = [(t.aliases, english_name(t.en), []) for t in terms if t.aliases]
    return tuple(build_synonyms(entries))


def rewrite(query: str, table: Iterable[Synonym]) -> str:
    """``query`` in lower case, with each synonym's term in it (see the module's docstring)."""
    query = query.lower()
    taken: list[tuple[int, int, Synonym]] = []
    for syn in table:
        if syn.phrase not in query and not syn.phrase.isascii():
            continue  # a fast path: a Chinese phrase is matched literally
        if any(word.lower() in query for word in syn.unless):
            continue
        for match in re.finditer(syn.pattern, query):
            start, end = match.span()
            if all(end <= s or start >= e for s, e, _ in taken):
                taken.append((start, end, syn))
    out, pos = [], 0
    for start, end, syn in sorted(taken, key=lambda t: t[0]):
        kept = "" if syn.replace else query[start:end]
        out += [query[pos:start], f"{kept} {syn.term} "]
        pos = end
    return "".join([*out, query[pos:]])


def chinese_terms(run: str) -> list[str]:
    """A run of Chinese characters as terms, in order: each character, then the pair it ends
    (which finds the words); stop words are cut out first."""
    run = _STOP_ZH.sub("", run)
    out: list[str] = []
    for i, char in enumerate(run):
        out.append(char)
        if i:
            out.append(run[i - 1 : i + 1])
    return out


def query_terms(query: str, limit: int | None = MAX_TERMS) -> list[str]:
    """The terms of ``query``, each once, in order, at most ``limit`` (see the module's
    docstring)."""
    tokens = _TOKEN.findall(query)
    out: dict[str, None] = {}
    for token in tokens:
        if _CJK.search(token):
            out.update(dict.fromkeys(chinese_terms(token)))
        elif token.lower() not in STOP_EN:
            out[token.lower()] = None
    if not out:
        out = dict.fromkeys(t.lower() for t in tokens)
    return list(out)[:limit]


def read_query(query: str, table: Iterable[Synonym] = ()) -> list[str]:
    """The terms a search ranks by: of the query's first `MAX_CHARS` characters, with the
    synonyms of ``table``, the first `MAX_TERMS`."""
    return query_terms(rewrite(query[:MAX_CHARS], table))


def directory_data(lang: str) -> dict[str, object]:
    """What the site's search box needs to read a query as the CLI does, for the page
    directory of ``lang``: the caps, the stop words and the synonyms."""
    return {
        "max_chars": MAX_CHARS,
        "max_terms": MAX_TERMS,
        "stop": sorted(STOP_EN),
        "stop_zh": STOP_ZH,
        "synonyms": [s.as_list() for s in synonyms(lang)],
    }
