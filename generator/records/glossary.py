"""The Chinese glossary: one term per concept, and the check that every Chinese text uses it.

The glossary lives in ``tips/_glossary.yaml``. Each term names the concept in English, its one
Chinese term, and the variants to ``avoid``. ``find_variants`` finds avoided variants in
Chinese prose (code spans and fenced code are skipped; Latin variants such as ``batch`` match
whole words only, so ``batch_size`` and ``BatchNorm`` are untouched). ``validate`` reports them
as problems of the record, and the glossary is rendered as a page of the site.

A word can be right for one concept and wrong for another, so a term may also say where its
variants are right after all, judged by the paragraph they stand in: inside a phrase of
``allow`` (操作系统内核 is no GPU kernel), or in a paragraph that names one of ``allow_near``
(作业 next to SLURM). Its ``confusable`` word, a term of another concept, is refused in a
paragraph that names one of its ``near`` words (检查点 next to 重计算 means activation
checkpointing, not saved training state). A term with a ``gloss`` is glossed on its first use
in a record (``first_use_problems``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, ValidationInfo, field_validator

from generator import paths
from generator.errors import InvalidRecords, Problem
from generator.records.cjk import joins
from generator.records.fields import Strict, Text
from generator.records.yamlio import Loc, YamlProblem, parse_document, read_bytes

GLOSSARY = paths.TIPS / "_glossary.yaml"

#: Fenced code, and inline code (which may wrap onto the next line, as Markdown allows).
_CODE = re.compile(r"```.*?```|`(?:[^`\n]|\n(?![ \t]*\n))*`", re.S)
_LATIN = re.compile(r"^[A-Za-z][A-Za-z0-9 .\-]*$")
#: A blank line ends a paragraph; so does a line break before a table row (each row stands alone).
_PARAGRAPH = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*\|)")
_WRAP = re.compile(r"(?<=(.))[ \t]*\n[ \t]*(?=(.))")


class Confusable(Strict):
    """A word that names another concept, refused where a paragraph is about this one."""

    word: str = Field(min_length=1, description="The word, a term of another concept.")
    near: list[str] = Field(
        min_length=1,
        description="The word is refused in a paragraph (code included) that names one of these.",
    )
    allow: list[str] = Field(
        default=[], description="Phrases in which the word keeps its own meaning, even there."
    )


class Term(Strict):
    """One concept and the single Chinese term the knowledge base uses for it."""

    en: str = Field(min_length=1, description="The concept in English.")
    zh: str = Field(min_length=1, description="The one Chinese term for it.")
    avoid: list[str] = Field(
        description="Variants that must not appear in Chinese text (outside code); Latin "
        "variants match whole words, case-insensitively."
    )
    aliases: list[str] = Field(
        default=[],
        description="Other English names users search the concept by (gradient checkpointing); "
        "search reads them as the term, in both languages.",
    )
    note: Text | None = Field(default=None, description="Usage note shown on the glossary page.")
    allow: list[str] = Field(
        default=[],
        description="Phrases in which a variant names another concept and is right "
        "(操作系统内核 for the term kernel).",
    )
    allow_near: list[str] = Field(
        default=[],
        description="The variants are right in a paragraph (code included) that names one of "
        "these (作业 next to SLURM).",
    )
    gloss: str | None = Field(
        default=None,
        description="The form of the term's first use in a record, after its title; accepted "
        "as the term everywhere.",
    )
    confusable: Confusable | None = Field(
        default=None, description="A word of another concept refused for this one."
    )

    @field_validator("gloss")
    @classmethod
    def _glosses_the_term(cls, value: str | None, info: ValidationInfo) -> str | None:
        term = info.data.get("zh")
        if value is not None and term is not None and not value.startswith(term):
            raise ValueError(f"the gloss must start with the term {term!r}")
        return value

    @field_validator("avoid", "aliases")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value) or any(not v.strip() for v in value):
            raise ValueError("variants must be distinct and non-empty")
        return value


class PageText(Strict):
    """The glossary page's own texts."""

    title: Text = Field(description="Page title.")
    intro: Text = Field(description="Paragraph under the title.")
    columns: dict[str, list[str]] = Field(
        description="Column headers per language (en, zh): concept, term, variants, note."
    )
    first_use: Text = Field(description="Words before a term's gloss, in its note.")


class Glossary(Strict):
    """Every term, in the order the page shows them."""

    page: PageText = Field(description="Title, introduction and column headers of the page.")
    terms: list[Term] = Field(min_length=1, description="The terms.")

    @functools.cached_property
    def glosses(self) -> list[tuple[str, str]]:
        """(a term glossed by one of its variants, the term): 微批次（micro-batch） is the term.

        A term's own ``gloss`` counts as the term too."""
        return [(term.gloss, term.zh) for term in self.terms if term.gloss] + [
            (f"{term.zh}{open_}{variant}{close}", term.zh)
            for term in self.terms
            for variant in term.avoid
            for open_, close in (("（", "）"), (" (", ")"), ("(", ")"))
        ]

    @functools.cached_property
    def patterns(self) -> list[tuple[re.Pattern[str], str, str]]:
        """(regex, variant, preferred term) for every avoided variant, compiled once."""
        return [(rx, variant, term.zh) for term, rxs in self.term_patterns for rx, variant in rxs]

    @functools.cached_property
    def order(self) -> dict[tuple[str, str], int]:
        """(variant, preferred term) -> its rank in the glossary, the order problems are told in."""
        return {(variant, zh): i for i, (_, variant, zh) in enumerate(self.patterns)}

    @functools.cached_property
    def term_patterns(self) -> list[tuple[Term, list[tuple[re.Pattern[str], str]]]]:
        """Each term with (regex, variant) for each of its variants."""
        out = []
        for term in self.terms:
            rxs = []
            for variant in term.avoid:
                if _LATIN.match(variant):
                    body = r"\s*".join(re.escape(w) for w in variant.split())
                    rx = re.compile(rf"(?<![A-Za-z0-9_]){body}(?![A-Za-z0-9_])", re.I)
                else:
                    rx = re.compile(re.escape(variant))
                rxs.append((rx, variant))
            out.append((term, rxs))
        return out


def load_glossary(path: Path = GLOSSARY) -> Glossary:
    """Read and validate the glossary file (parsed once per content of the file).

    Raises:
        InvalidRecords: the file is unreadable or does not match the model.
    """
    file = str(path.relative_to(paths.ROOT)) if path.is_relative_to(paths.ROOT) else str(path)
    try:
        raw = read_bytes(path)
    except YamlProblem as err:
        raise InvalidRecords([Problem(file, err.line, err.field, err.reason)]) from None
    except OSError as err:
        raise InvalidRecords([Problem(file, 1, "(file)", f"cannot read: {err.strerror}")]) from None
    return _parse_glossary(file, raw)


@functools.lru_cache(maxsize=8)
def _parse_glossary(file: str, raw: bytes) -> Glossary:
    try:
        doc = parse_document(raw)
        glossary = Glossary.model_validate(doc.data)
    except YamlProblem as err:
        raise InvalidRecords([Problem(file, err.line, err.field, err.reason)]) from None
    except ValidationError as err:
        raise InvalidRecords(
            [
                Problem(file, doc.line_of(e["loc"]), ".".join(map(str, e["loc"])), e["msg"])
                for e in err.errors()
            ]
        ) from None
    zh_terms = [t.zh for t in glossary.terms]
    for term in glossary.terms:
        for variant in term.avoid:
            if variant in zh_terms:
                raise InvalidRecords(
                    [Problem(file, 1, "terms", f"{variant!r} is both a term and a variant")]
                )
    return glossary


def prose(text: str) -> str:
    """``text`` without fenced code blocks and inline code spans."""
    return _CODE.sub(" ", text)


def paragraphs(text: str) -> list[tuple[str, str]]:
    """(prose, text) of each paragraph of ``text``, a Markdown table row counting as one; a blank
    line inside code splits nothing."""
    out: list[tuple[str, str]] = []
    plain: list[str] = []
    raw: list[str] = []
    pos = 0
    for code in [*_CODE.finditer(text), None]:
        for i, part in enumerate(_PARAGRAPH.split(text[pos : code.start() if code else None])):
            if i:
                out.append(("".join(plain), "".join(raw)))
                plain, raw = [], []
            plain.append(part)
            raw.append(part)
        if code:
            plain.append(" ")
            raw.append(code.group(0))
            pos = code.end()
    out.append(("".join(plain), "".join(raw)))
    return out


def _unwrap(text: str) -> str:
    """``text`` with its line breaks joined as the page renders them: a wrapped gloss is one."""
    return _WRAP.sub(lambda m: "" if joins(m.group(1), m.group(2)) else " ", text)


def _mask(text: str, phrases: Iterable[str]) -> str:
    for phrase in phrases:
        text = text.replace(phrase, " ")
    return text


def find_variants(text: str, glossary: Glossary | None = None) -> list[tuple[str, str]]:
    """Each (variant, preferred term) used in the prose of a Chinese ``text``.

    A variant inside its own term (吞吐 in 吞吐量) or inside one of the term's ``allow`` phrases
    is no variant, nor is one in a paragraph that names one of the term's ``allow_near`` words;
    a term's ``confusable`` word counts as a variant in a paragraph that names one of its
    ``near`` words.
    """
    glossary = glossary or load_glossary()
    found: dict[tuple[str, str], None] = {}
    for para, raw in paragraphs(text):
        para = _unwrap(para)
        for gloss, preferred in glossary.glosses:
            para = para.replace(gloss, preferred)
        for term, rxs in glossary.term_patterns:
            if not any(word in raw for word in term.allow_near):
                plain = _mask(para, [term.zh, *term.allow])
                found |= {(variant, term.zh): None for rx, variant in rxs if rx.search(plain)}
            other = term.confusable
            if other and any(word in raw for word in other.near):
                if other.word in _mask(para, [*other.allow, *term.avoid]):
                    found[other.word, term.zh] = None
    order = glossary.order
    return sorted(found, key=lambda key: order.get(key, len(order)))


def first_use_problems(
    texts: Iterable[tuple[Loc, str]], glossary: Glossary | None = None
) -> list[tuple[Loc, str, str]]:
    """(location, term, gloss) for each glossed term whose first use in ``texts`` is bare.

    ``texts`` are a record's Chinese texts in page order (its title left out): the first one
    whose prose names a term that has a ``gloss`` must start that use with the gloss.
    """
    glossary = glossary or load_glossary()
    pending = [term for term in glossary.terms if term.gloss]
    problems = []
    for loc, text in texts:
        plain = _unwrap(prose(text))
        for term in [t for t in pending if t.zh in plain]:
            pending.remove(term)
            if plain.find(term.zh) != plain.find(str(term.gloss)):
                problems.append((loc, term.zh, str(term.gloss)))
    return problems


def texts(obj: Any, loc: Loc = ()) -> Iterator[tuple[Loc, Text]]:
    """Every bilingual text of a record (a pydantic model), with its location."""
    if isinstance(obj, Text):
        yield loc, obj
    elif isinstance(obj, BaseModel):
        for name in type(obj).model_fields:
            yield from texts(getattr(obj, name), (*loc, name))
    elif isinstance(obj, list | tuple):
        for i, item in enumerate(obj):
            yield from texts(item, (*loc, i))
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from texts(value, (*loc, str(key)))


def chinese_texts(obj: Any, loc: Loc = ()) -> Iterator[tuple[Loc, str]]:
    """Every Chinese text of a record (a pydantic model), with its location."""
    for where, text in texts(obj, loc):
        yield (*where, "zh"), text.zh


def page_markdown(lang: str, glossary: Glossary | None = None) -> str:
    """The glossary page in ``lang`` (``en`` or ``zh``), from ``templates/site/glossary.md.j2``."""
    from generator.records.render import render

    return render("site/glossary.md.j2", glossary=glossary or load_glossary(), lang=lang)
