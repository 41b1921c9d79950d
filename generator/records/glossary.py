"""The Chinese glossary: one term per concept, and the check that every Chinese text uses it.

The glossary lives in ``tips/_glossary.yaml``. Each term names the concept in English, its one
Chinese term, and the variants to ``avoid``. ``find_variants`` finds avoided variants in
Chinese prose (code spans and fenced code are skipped; Latin variants such as ``batch`` match
whole words only, so ``batch_size`` and ``BatchNorm`` are untouched). ``validate`` reports them
as problems of the record, and the glossary is rendered as a page of the site.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from generator import paths
from generator.errors import InvalidRecords, Problem
from generator.records.schema import Strict, Text
from generator.records.yamlio import Loc, YamlProblem, read_document

GLOSSARY = paths.TIPS / "_glossary.yaml"

_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
_LATIN = re.compile(r"^[A-Za-z][A-Za-z0-9 .\-]*$")


class Term(Strict):
    """One concept and the single Chinese term the knowledge base uses for it."""

    en: str = Field(min_length=1, description="The concept in English.")
    zh: str = Field(min_length=1, description="The one Chinese term for it.")
    avoid: list[str] = Field(
        description="Variants that must not appear in Chinese text (outside code); Latin "
        "variants match whole words, case-insensitively."
    )
    note: Text | None = Field(default=None, description="Usage note shown on the glossary page.")

    @field_validator("avoid")
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


class Glossary(Strict):
    """Every term, in the order the page shows them."""

    page: PageText = Field(description="Title, introduction and column headers of the page.")
    terms: list[Term] = Field(min_length=1, description="The terms.")

    @functools.cached_property
    def glosses(self) -> list[tuple[str, str]]:
        """(a term glossed by one of its variants, the term): 微批次（micro-batch） is the term."""
        return [
            (f"{term.zh}{open_}{variant}{close}", term.zh)
            for term in self.terms
            for variant in term.avoid
            for open_, close in (("（", "）"), (" (", ")"), ("(", ")"))
        ]

    @functools.cached_property
    def patterns(self) -> list[tuple[re.Pattern[str], str, str]]:
        """(regex, variant, preferred term) for every avoided variant, compiled once."""
        out = []
        for term in self.terms:
            for variant in term.avoid:
                if _LATIN.match(variant):
                    body = r"\s*".join(re.escape(w) for w in variant.split())
                    rx = re.compile(rf"(?<![A-Za-z0-9_]){body}(?![A-Za-z0-9_])", re.I)
                else:
                    rx = re.compile(re.escape(variant))
                out.append((rx, variant, term.zh))
        return out


@functools.cache
def load_glossary(path: Path = GLOSSARY) -> Glossary:
    """Read and validate the glossary file.

    Raises:
        InvalidRecords: the file is unreadable or does not match the model.
    """
    file = str(path.relative_to(paths.ROOT)) if path.is_relative_to(paths.ROOT) else str(path)
    try:
        doc = read_document(path)
        glossary = Glossary.model_validate(doc.data)
    except YamlProblem as err:
        raise InvalidRecords([Problem(file, err.line, "(file)", err.reason)]) from None
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


def find_variants(text: str, glossary: Glossary | None = None) -> list[tuple[str, str]]:
    """Each (variant, preferred term) used in the prose of a Chinese ``text``."""
    glossary = glossary or load_glossary()
    plain = prose(text)
    for gloss, term in glossary.glosses:
        plain = plain.replace(gloss, term)
    return [(variant, zh) for rx, variant, zh in glossary.patterns if rx.search(plain)]


def chinese_texts(obj: Any, loc: Loc = ()) -> Iterator[tuple[Loc, str]]:
    """Every Chinese text of a record (a pydantic model), with its location."""
    if isinstance(obj, Text):
        yield (*loc, "zh"), obj.zh
    elif isinstance(obj, BaseModel):
        for name in type(obj).model_fields:
            yield from chinese_texts(getattr(obj, name), (*loc, name))
    elif isinstance(obj, list | tuple):
        for i, item in enumerate(obj):
            yield from chinese_texts(item, (*loc, i))
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from chinese_texts(value, (*loc, str(key)))


def page_markdown(lang: str, glossary: Glossary | None = None) -> str:
    """The glossary page in ``lang`` (``en`` or ``zh``), from ``templates/site/glossary.md.j2``."""
    from generator.records.render import render

    return render("site/glossary.md.j2", glossary=glossary or load_glossary(), lang=lang)
