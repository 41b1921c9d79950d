"""The building blocks of the record schema: the strict base model, bilingual text (`Text`,
`Line`), identifiers and the vocabularies of `generator.records.taxonomy` as types."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from generator.records.taxonomy import CATEGORIES, COMPOSE_FEATURES, DEVICES, IMPACTS, SEEDS, TAGS

ID_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
_CJK = re.compile(r"[\u3400-\u9fff]")
_PLACEHOLDER = "TODO"

# The vocabularies are data (taxonomy.py): pydantic validates each field against its Literal,
# built at import; a static checker cannot evaluate ``Literal[tuple(...)]`` and sees ``str``.
if TYPE_CHECKING:
    Category = str
    Tag = str
    Impact = str
    Device = str
    Seed = str
    Feature = str
else:
    Category = Literal[tuple(CATEGORIES)]
    Tag = Literal[tuple(TAGS)]
    Impact = Literal[tuple(IMPACTS)]
    Device = Literal[tuple(DEVICES)]
    Seed = Literal[tuple(SEEDS)]
    Feature = Literal[tuple(COMPOSE_FEATURES)]
TipId = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
PythonCode = Annotated[str, StringConstraints(min_length=1)]


class Strict(BaseModel):
    """Base for every record part: unknown keys are errors, values are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Text(Strict):
    """A human-readable text in English and Chinese; both are required and non-empty."""

    en: str = Field(description="English text (Markdown where the field allows it).")
    zh: str = Field(
        description="Chinese text, written for Chinese-speaking engineers, not a gloss."
    )
    allow: list[str] = Field(
        default=[],
        exclude=True,
        description="Phrases of `zh` quoted verbatim from a Chinese source, inside quotation "
        "marks, that may keep a form the Chinese style rules refuse (“提升 3 倍”; see "
        "docs/contributing.zh.md).",
    )

    @field_validator("en", "zh")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        if _PLACEHOLDER in value:
            raise ValueError(f"still contains the {_PLACEHOLDER} placeholder of the template")
        return value.strip()

    @field_validator("zh")
    @classmethod
    def _is_chinese(cls, value: str) -> str:
        if not _CJK.search(value):
            raise ValueError("has no Chinese characters: translate it")
        return value

    def get(self, lang: str) -> str:
        """Return the text in ``lang`` (``en`` or ``zh``)."""
        return self.zh if lang == "zh" else self.en


class Line(Text):
    """A one-line bilingual text (no line breaks)."""

    @field_validator("en", "zh")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value.strip():
            raise ValueError("must be a single line")
        return value


class Source(Strict):
    """Where the advice comes from: a seed document or a web page."""

    seed: Seed | None = Field(default=None, description="Seed document prefix (000-004).")
    url: Annotated[str, StringConstraints(pattern=r"^https://\S+$")] | None = Field(
        default=None, description="https link to documentation or an article."
    )
    title: str | None = Field(default=None, description="Title of the linked page.")

    @model_validator(mode="after")
    def _one_kind(self) -> Source:
        if (self.seed is None) == (self.url is None):
            raise ValueError("give exactly one of seed or url")
        if self.url is not None and not self.title:
            raise ValueError("a url source needs a title")
        return self
