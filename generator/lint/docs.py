"""The "Lint your script" page: usage, the pre-commit snippet and the table of rules,
rendered from the rule classes and the records (``generator/templates/site/lint.md.j2``).

The MkDocs hook writes it as ``docs/lint.md`` and ``docs/lint.zh.md``; the tip links are
relative to the docs root.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from generator.lint.rules import RULES
from generator.lint.rules.base import Rule
from generator.records.schema import Tip

if TYPE_CHECKING:
    from generator.records.search import Document

#: What users put in `.pre-commit-config.yaml`; the lead sets the public URL and a tag.


@dataclass(frozen=True)
class RuleRow:
    """One row of the rule table."""

    code: str
    severity: str
    message: str
    tip: str
    tip_title: str
    fixable: bool


def rule_rows(lang: str, tips: Sequence[Tip] | None = None) -> list[RuleRow]:
    """The rules in code order, each with the title of its tip in ``lang``."""
    if tips is None:
        from generator.records.load import load_tips

        tips = load_tips()
    titles = {t.id: t.title.get(lang) for t in tips}
    return [
        RuleRow(
            code=r.code,
            severity=r.severity,
            message=r.message,
            tip=r.tip,
            tip_title=titles.get(r.tip, r.tip),
            fixable=r.fixable and r.fix_safety == "safe",
        )
        for r in RULES
    ]


def _example(rule: type[Rule]) -> tuple[str, str]:
    from generator.lint.engine import Finding
    from generator.lint.report import text_line

    finding = Finding(
        path="train.py",
        line=42,
        column=9,
        rule=rule.code,
        message=rule.message,
        tip=rule.tip,
        severity=rule.severity,
        fixable=True,
    )
    return text_line(finding), "Found 1 finding in 1 of 1 file (1 fixable with --fix)."


def page_markdown(lang: str, tips: Sequence[Tip] | None = None) -> str:
    """The Markdown of the page in ``lang`` (``en`` or ``zh``)."""
    from generator.records.render import render
    from generator.records.ui import labels

    example = next(r for r in RULES if r.code == "PTT011")
    line, summary = _example(example)
    return render(
        "site/lint.md.j2",
        lang=lang,
        L=labels()[lang],
        rules=rule_rows(lang, tips),
        example_line=line,
        example_summary=summary,
    )


def rule_page(code: str) -> str:
    """The site page of a rule, relative to the language root."""
    return f"lint/rules/{code}/"


def search_documents(lang: str, tips: Sequence[Tip] | None = None) -> list[Document]:
    """One search document per rule (`generator.records.search`): found by its code, its
    name, its message and the title of its tip."""
    from generator.records.search import Document

    return [
        Document(
            page=rule_page(row.code),
            kind="rule",
            title=f"{row.code}: {row.message}",
            summary=row.message,
            own=(row.code,),
            keywords=(row.code, rule.name.replace("-", " ")),
            command="lint",
            id=row.code,
        )
        for row, rule in zip(rule_rows(lang, tips), RULES, strict=True)
    ]
