"""Problem-first entry points: the curated tip lists of the home page and the launch checklist.

Both are data in ``tips/``:

- ``tips/_problems.yaml``: one entry per problem a user arrives with (out of memory, slow
  training, several GPUs, reproducibility, checkpoints), each a title, an introduction, the
  words users search for it with, and the ids of the tips to read, in reading order;
- ``tips/_checklist.yaml``: the "Before you launch" checks, one line each, each naming the tip
  that explains it;
- ``tips/_pages.yaml``: what search knows of the other pages users look for (the composer, the
  lint page, the guides): title, summary and search words, for the site and the CLI alike.

The first two become pages (``problems/<slug>.md``, ``checklist.md``, both languages). An unknown tip
id is an error of ``python -m generator validate`` and of the build, as is a Chinese text that
uses a variant the glossary avoids.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, RootModel, ValidationError, field_validator

from generator import paths
from generator.command import relative
from generator.errors import InvalidRecords, Problem
from generator.records.fields import Strict, Text
from generator.records.yamlio import Loc, YamlProblem, read_document

PROBLEMS_FILE = paths.TIPS / "_problems.yaml"
CHECKLIST_FILE = paths.TIPS / "_checklist.yaml"
PAGES_FILE = paths.TIPS / "_pages.yaml"


class Keywords(Strict):
    """Words users type for a problem, per language."""

    en: list[str] = Field(min_length=1, description="English search words.")
    zh: list[str] = Field(min_length=1, description="Chinese search words.")

    def get(self, lang: str) -> list[str]:
        """The words in ``lang``."""
        return self.zh if lang == "zh" else self.en


class Triage(Strict):
    """One line of a problem's decision list: what the user sees, and the tips that answer it."""

    when: Text = Field(
        description="What the user sees or measures, as they would say it (a message, a trace)."
    )
    tips: list[str] = Field(
        min_length=1, max_length=3, description="The tips that answer it; each one the page lists."
    )


class Entry(Strict):
    """One problem and the tips that address it, in reading order."""

    title: Text = Field(description="The problem as the user would put it (page title, card).")
    icon: str = Field(
        pattern=r"^[a-z0-9-]+$",
        description="Material Design icon of the home page card, such as `memory`.",
    )
    intro: Text = Field(description="One or two sentences: what to do first, shown on the page.")
    keywords: Keywords = Field(
        description="What users search for with this problem; every listed tip is found by them."
    )
    tips: list[str] = Field(min_length=3, description="Tip ids, most useful first.")
    triage: list[Triage] = Field(
        min_length=2,
        max_length=8,
        description="The decision list the page opens with: if you see this, read that tip.",
    )
    helps: str | None = Field(
        default=None,
        description="A kind of hardware (a key of DEVICES, such as `multi-gpu`) the problem is "
        "about: the page says its list is the tips to read first, and links the catalog filtered "
        "to every tip that pays off there.",
    )
    doctor: bool = Field(
        default=False,
        description="Offer `pytorch-tips doctor` on the page: measure instead of guessing.",
    )

    @field_validator("helps")
    @classmethod
    def _device(cls, value: str | None) -> str | None:
        from generator.records.taxonomy import DEVICES

        if value is not None and value not in DEVICES:
            raise ValueError(f"helps must be one of {', '.join(DEVICES)}")
        return value

    @field_validator("tips")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a tip is listed twice")
        return value


class Check(Strict):
    """One line of the checklist."""

    check: Text = Field(description="The check, one line, imperative.")
    tip: str = Field(min_length=1, description="Id of the tip that explains it.")


class Checklist(Strict):
    """The "Before you launch" page."""

    title: Text = Field(description="Page title.")
    intro: Text = Field(description="Paragraph under the title.")
    checks: list[Check] = Field(min_length=5, description="The checks, in the order to run them.")
    keywords: Keywords | None = Field(
        default=None, description="What users search for the checklist with."
    )


class PageEntry(Strict):
    """What search knows of a page that is neither a tip nor a problem (``tips/_pages.yaml``)."""

    title: Text = Field(description="The page's H1.")
    summary: Text = Field(description="One line shown under the title in search results.")
    keywords: Keywords = Field(description="What users search for the page with.")
    command: str | None = Field(
        default=None,
        pattern=r"^[a-z]+$",
        description="The `python -m generator` subcommand that does the page's job.",
    )


class _PagesFile(RootModel[dict[str, PageEntry]]):
    """``tips/_pages.yaml``: page path (no language suffix) -> entry."""

    @field_validator("root")
    @classmethod
    def _paths(cls, value: dict[str, PageEntry]) -> dict[str, PageEntry]:
        bad = [k for k in value if not re.fullmatch(r"[a-z0-9-]+(/[a-z0-9-]+)*", k)]
        if bad:
            raise ValueError(f"page paths are lowercase words joined by '-' and '/': {bad}")
        return value


class EntryPoints(Strict):
    """Both files, loaded and checked against the tips."""

    problems: dict[str, Entry]
    checklist: Checklist
    pages: dict[str, PageEntry] = Field(default_factory=dict)

    def keywords_by_tip(self, lang: str, first: int | None = None) -> dict[str, list[str]]:
        """For each tip id, the titles and search words of the problems that list it (with
        ``first``, only the problems that list it among their ``first`` tips)."""
        out: dict[str, list[str]] = {}
        for entry in self.problems.values():
            for tip_id in entry.tips[:first]:
                out.setdefault(tip_id, []).extend(
                    [entry.title.get(lang), *entry.keywords.get(lang)]
                )
        return out


class _ProblemsFile(RootModel[dict[str, Entry]]):
    """``tips/_problems.yaml``: problem slug -> entry."""

    @field_validator("root")
    @classmethod
    def _slugs(cls, value: dict[str, Entry]) -> dict[str, Entry]:
        bad = [k for k in value if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", k)]
        if bad:
            raise ValueError(f"problem slugs are lowercase words joined by '-': {bad}")
        if len(value) < 3:
            raise ValueError("list at least three problems")
        return value


def _load(path: Path, model: Any) -> tuple[Any, Any]:
    file = relative(path)
    try:
        doc = read_document(path)
    except YamlProblem as err:
        raise InvalidRecords([Problem(file, err.line, err.field, err.reason)]) from None
    try:
        return model.model_validate(doc.data), doc
    except ValidationError as err:
        raise InvalidRecords(
            [
                Problem(file, doc.line_of(e["loc"]), ".".join(map(str, e["loc"])), e["msg"])
                for e in err.errors()
            ]
        ) from None


def _unknown(
    file: str, doc: Any, refs: Iterable[tuple[Loc, str]], known: set[str]
) -> list[Problem]:
    return [
        Problem(file, doc.line_of(loc), ".".join(map(str, loc)), f"no tip has the id {tip_id!r}")
        for loc, tip_id in refs
        if tip_id not in known
    ]


def _glossary(file: str, doc: Any, texts: Iterable[tuple[Loc, Text]]) -> list[Problem]:
    """Chinese texts that use a variant the glossary avoids or break a style rule (倍)."""
    from generator.records.glossary import find_variants, load_glossary
    from generator.records.zhstyle import text_problems

    glossary = load_glossary()
    found = []
    for loc, text in texts:
        where = ".".join(map(str, (*loc, "zh")))
        line = doc.line_of((*loc, "zh"))
        found += [
            Problem(
                file,
                line,
                where,
                f"uses {variant!r}: the glossary term is {term!r} (tips/_glossary.yaml)",
            )
            for variant, term in find_variants(text.zh, glossary)
        ]
        found += [Problem(file, line, where, reason) for _, reason in text_problems(text)]
    return found


def check_entry_points(
    known: set[str],
    problems_file: Path = PROBLEMS_FILE,
    checklist_file: Path = CHECKLIST_FILE,
    pages_file: Path = PAGES_FILE,
) -> tuple[EntryPoints | None, list[Problem]]:
    """Load the three files and check them against the tip ids in ``known``.

    Returns the entry points (``None`` when a file does not load) and every problem found:
    unknown tip ids, and Chinese texts that use a variant the glossary avoids.
    """
    try:
        raw_problems, pdoc = _load(problems_file, _ProblemsFile)
        checklist, cdoc = _load(checklist_file, Checklist)
        pages, gdoc = _load(pages_file, _PagesFile)
    except InvalidRecords as err:
        return None, list(err.problems)
    pfile, cfile = relative(problems_file), relative(checklist_file)
    found = _unknown(
        pfile,
        pdoc,
        (
            ((slug, "tips", i), tip_id)
            for slug, entry in raw_problems.root.items()
            for i, tip_id in enumerate(entry.tips)
        ),
        known,
    )
    found += _unknown(
        pfile,
        pdoc,
        (
            ((slug, "triage", i, "tips", j), tip_id)
            for slug, entry in raw_problems.root.items()
            for i, line in enumerate(entry.triage)
            for j, tip_id in enumerate(line.tips)
        ),
        known,
    )
    found += [
        Problem(
            pfile,
            pdoc.line_of((slug, "triage", i, "tips", j)),
            f"{slug}.triage.{i}.tips.{j}",
            f"{tip_id!r} is not in the problem's own list of tips: add it there first",
        )
        for slug, entry in raw_problems.root.items()
        for i, line in enumerate(entry.triage)
        for j, tip_id in enumerate(line.tips)
        if tip_id in known and tip_id not in entry.tips
    ]
    found += _unknown(
        cfile, cdoc, ((("checks", i, "tip"), c.tip) for i, c in enumerate(checklist.checks)), known
    )
    found += _glossary(
        pfile,
        pdoc,
        (
            ((slug, field), getattr(entry, field))
            for slug, entry in raw_problems.root.items()
            for field in ("title", "intro")
        ),
    )
    found += _glossary(
        pfile,
        pdoc,
        (
            ((slug, "triage", i, "when"), line.when)
            for slug, entry in raw_problems.root.items()
            for i, line in enumerate(entry.triage)
        ),
    )
    found += _glossary(
        cfile,
        cdoc,
        [(("title",), checklist.title), (("intro",), checklist.intro)]
        + [(("checks", i, "check"), c.check) for i, c in enumerate(checklist.checks)],
    )
    found += _glossary(
        relative(pages_file),
        gdoc,
        (
            ((path, field), getattr(entry, field))
            for path, entry in pages.root.items()
            for field in ("title", "summary")
        ),
    )
    return (
        EntryPoints(problems=dict(raw_problems.root), checklist=checklist, pages=dict(pages.root)),
        found,
    )


@functools.cache
def load_entry_points(known: frozenset[str]) -> EntryPoints:
    """The problems and the checklist, checked against the tip ids in ``known``.

    Raises:
        InvalidRecords: a file does not load, names an unknown tip, or breaks the glossary.
    """
    entry_points, found = check_entry_points(set(known))
    if found or entry_points is None:
        raise InvalidRecords(found)
    return entry_points


def doctor_page() -> str | None:
    """The doctor's page below docs/ (``doctor.md``), or ``None`` while there is none: a
    problem page offers the doctor only once its page exists."""
    for name in ("doctor.md", "doctor/index.md"):
        if (paths.DOCS / name).is_file():
            return name
    return None


def page_files(
    entry_points: EntryPoints,
    tips_by_id: Mapping[str, Any],
    labels: Mapping[str, Mapping[str, str]],
    langs: Sequence[str] = ("en", "zh"),
) -> dict[Path, str]:
    """The problem pages and the checklist page in every language, by path under docs/."""
    from generator.records.render import render
    from generator.records.taxonomy import DEVICES

    files: dict[Path, str] = {}
    for lang in langs:
        suffix = ".md" if lang == "en" else f".{lang}.md"
        for slug, entry in entry_points.problems.items():
            files[paths.DOCS / "problems" / f"{slug}{suffix}"] = render(
                "site/problem.md.j2",
                slug=slug,
                entry=entry,
                tips=[tips_by_id[t] for t in entry.tips],
                tips_by_id=tips_by_id,
                doctor=doctor_page() if entry.doctor else None,
                helping=[t for t in tips_by_id.values() if entry.helps in t.hardware.helps_on]
                if entry.helps
                else [],
                devices=DEVICES,
                lang=lang,
                L=labels[lang],
            )
        files[paths.DOCS / f"checklist{suffix}"] = render(
            "site/checklist.md.j2",
            checklist=entry_points.checklist,
            tips_by_id=tips_by_id,
            lang=lang,
            L=labels[lang],
        )
    return files
