"""How both search engines read a query: the words that carry no meaning, and British and
American spellings. The CLI (`generator.records.search`) uses them directly; the site's
search box gets them in each language's page directory (`generator.site.search`).

Stop words: dropped from a query when other words remain ("why is my training so slow" looks
for *training* and *slow*). In Chinese they are cut out of the runs of characters
(`STOP_ZH`), since a query has no spaces between words.

Spelling: stemmers do not join *utilization* and *utilisation* (Snowball stems them to ``util``
and ``utilis``), and the records use both (``measure-mfu`` says *utilisation*, the problems
*utilization*). Both engines therefore index, next to a page's text, the other spelling of each
word that has one: `variants` gives them, `respelled` a phrase in the other spelling. A variant
that is no word (*exercize*) is harmless: nobody searches for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: English words that carry no meaning in a query.
STOP_EN = frozenset(
    """a about after all also an and any are as at be been but by can could do does doing for
    from get gets getting has have how i if in into is it its me my of on or our so some than
    that the their then there these this those to too up us very was we were what when where
    which while who why will with without would you your""".split()
)

#: Chinese function words, cut out of a query's runs of characters: a regular expression.
STOP_ZH = "怎么办|怎么|怎样|如何|为什么|为何|什么|我的|可以|没有|一直|总是|还是|[的了吗呢啊吧很太]"

#: -ise/-ize and -yse/-yze word families, with their inflections (optimise, optimiser,
#: optimisation, initialised...). The stem before the suffix has at least three letters, so
#: short words (size, rise, wise) are left alone.
_ISE = re.compile(
    r"\b([a-z]{3,})([iy])([sz])(e|es|ed|er|ers|ing|ation|ations|able)\b", re.IGNORECASE
)

#: Pairs that no rule covers: -our/-or, -re/-er and doubled consonants.
_PAIRS = (
    ("behaviour", "behavior"),
    ("behaviours", "behaviors"),
    ("colour", "color"),
    ("favour", "favor"),
    ("neighbour", "neighbor"),
    ("neighbours", "neighbors"),
    ("centre", "center"),
    ("modelling", "modeling"),
    ("labelled", "labeled"),
    ("labelling", "labeling"),
    ("cancelled", "canceled"),
    ("signalling", "signaling"),
    ("travelled", "traveled"),
)
_OTHER = {a: b for a, b in _PAIRS} | {b: a for a, b in _PAIRS}
_WORD = re.compile(r"[A-Za-z]+")


def other_spelling(word: str) -> str | None:
    """The other spelling of ``word`` (lower case), or ``None`` if it has none.

    >>> other_spelling("utilisation"), other_spelling("Optimizer"), other_spelling("size")
    ('utilization', 'optimiser', None)
    """
    word = word.lower()
    if word in _OTHER:
        return _OTHER[word]
    match = _ISE.fullmatch(word)
    if match is None:
        return None
    stem, vowel, letter, ending = match.groups()
    return f"{stem}{vowel}{'z' if letter == 's' else 's'}{ending}"


def respelled(text: str) -> str | None:
    """``text`` with each word that has another spelling respelled, or ``None`` if none has.

    >>> respelled("GPU utilization is low"), respelled("slow training")
    ('GPU utilisation is low', None)
    """
    changed = False

    def swap(match: re.Match[str]) -> str:
        nonlocal changed
        other = other_spelling(match.group())
        if other is None:
            return match.group()
        changed = True
        return other

    out = _WORD.sub(swap, text)
    return out if changed else None


def variants(texts: str | Iterable[str]) -> list[str]:
    """The other spellings of the words of ``texts``, each once, in order of appearance."""
    if isinstance(texts, str):
        texts = [texts]
    found: dict[str, None] = {}
    for text in texts:
        for word in _WORD.findall(text):
            other = other_spelling(word)
            if other is not None:
                found.setdefault(other)
    return list(found)
