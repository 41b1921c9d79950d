"""The lint's pages: "Lint your script" (usage, the pre-commit snippet and the table of
rules) and one page per rule, in ruff's shape, rendered from the rule classes and the tip
records (``generator/templates/site/lint.md.j2``, ``lint_rule.md.j2``).

The MkDocs hook writes them as ``docs/lint.md`` / ``docs/lint.zh.md`` and
``docs/lint/rules/<CODE>.md`` / ``<CODE>.zh.md``; a rule page has the sections that
``python -m generator lint --explain CODE`` prints (`generator.lint.explain`), and the
SARIF ``helpUri`` of each rule points to it (`generator.lint.report.rule_url`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from generator.lint.explain import explain, fix_text
from generator.lint.report import rule_path
from generator.lint.rules import RULES
from generator.lint.rules.base import Rule
from generator.records.schema import Tip

#: Where the rule pages live below the docs root (``lint/rules/PTT020.md``).
RULE_DIR = PurePosixPath("lint/rules")

if TYPE_CHECKING:
    from generator.records.search import Document


@dataclass(frozen=True)
class RuleRow:
    """One row of the rule table."""

    code: str
    severity: str
    message: str
    tip: str
    tip_title: str
    fix: str | None
    default: bool

    @property
    def fixable(self) -> bool:
        """Whether ``--fix`` applies the rule's fix without ``--unsafe-fixes``."""
        return self.fix == "safe"


def _tips(tips: Sequence[Tip] | None) -> Sequence[Tip]:
    if tips is None:
        from generator.records.load import load_tips

        return load_tips()
    return tips


def rule_rows(lang: str, tips: Sequence[Tip] | None = None) -> list[RuleRow]:
    """The rules in code order, each with the title of its tip in ``lang``."""
    titles = {t.id: t.title.get(lang) for t in _tips(tips)}
    return [
        RuleRow(
            code=r.code,
            severity=r.severity,
            message=r.message_in(lang),
            tip=r.tip,
            tip_title=titles.get(r.tip, r.tip),
            fix=r.fix_safety,
            default=r.default,
        )
        for r in RULES
    ]


def _example(rule: type[Rule], lang: str) -> tuple[str, str]:
    from generator.lint.engine import Finding, LintResult
    from generator.lint.report import summary, text_line
    from generator.records.ui import labels

    L = labels()[lang]
    finding = Finding(
        path="train.py",
        line=42,
        column=9,
        rule=rule.code,
        message=rule.message_in(lang),
        tip=rule.tip,
        severity=rule.severity,
        fixable=rule.fix_safety == "safe",
        fix=rule.fix_safety,
    )
    return text_line(finding, L), summary(LintResult([finding], files=1), 0, L)


def page_markdown(lang: str, tips: Sequence[Tip] | None = None) -> str:
    """The Markdown of the page in ``lang`` (``en`` or ``zh``)."""
    from generator.lint.api import EXIT_CODES
    from generator.records.render import render
    from generator.records.ui import labels

    example = next(r for r in RULES if r.code == "PTT020")
    line, summary = _example(example, lang)
    return render(
        "site/lint.md.j2",
        lang=lang,
        L=labels()[lang],
        rules=rule_rows(lang, tips),
        rule_dir=str(RULE_DIR),
        example_line=line,
        example_summary=summary,
        exit_codes=EXIT_CODES,
    )


def rule_page(rule: type[Rule], lang: str, tip: Tip | None) -> str:
    """The Markdown of ``rule``'s page in ``lang``."""
    from generator.records.render import render
    from generator.records.ui import labels

    L = labels()[lang]
    text = None
    if tip is not None:
        text = (tip.title.get(lang), " ".join(tip.summary.get(lang).split()))
    exp = explain(rule, lang, text)
    return render("site/lint_rule.md.j2", e=exp, L=L, fix_text=fix_text(exp, L), lang=lang)


def rule_pages(lang: str, tips: Sequence[Tip] | None = None) -> dict[str, str]:
    """Every rule page in ``lang``: path below the docs root (``lint/rules/PTT020.md``, the
    language suffix left to the caller) -> Markdown."""
    by_id = {t.id: t for t in _tips(tips)}
    return {str(RULE_DIR / f"{r.code}.md"): rule_page(r, lang, by_id.get(r.tip)) for r in RULES}


def search_documents(lang: str, tips: Sequence[Tip] | None = None) -> list[Document]:
    """One search document per rule (`generator.records.search`), as `search_document`."""
    titles = {t.id: t.title.get(lang) for t in _tips(tips)}
    return [_document(rule, lang, titles.get(rule.tip, rule.tip)) for rule in RULES]


def search_document(code: str, lang: str, tips: Sequence[Tip] | None = None) -> Document:
    """The search document of the rule ``code`` in ``lang``: found by its code (the words of
    its name and message are its text: for them, the tip it enforces ranks first), titled with its code and message in that language (the site's search box shows the same
    title), and summed up by the title of the tip it enforces."""
    rule = next(r for r in RULES if r.code == code)
    tip = next((t for t in _tips(tips) if t.id == rule.tip), None)
    return _document(rule, lang, tip.title.get(lang) if tip else rule.tip)


def _document(rule: type[Rule], lang: str, tip_title: str) -> Document:
    from generator.records.search import Document
    from generator.records.ui import labels

    title = labels()[lang]["search_rule_title"].format(
        code=rule.code, message=rule.message_in(lang)
    )
    return Document(
        page=rule_path(rule.code),
        kind="rule",
        title=title,
        summary=tip_title,
        own=(rule.code,),
        keywords=(rule.code,),
        body=rule.name,  # as the page's heading says it
        command="lint",
        id=rule.code,
    )
