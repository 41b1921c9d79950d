"""What one rule is about, in sections as ruff's rule docs have them: what it reports, why
that is a problem, an example and what to use instead, how safe its fix is, and the tip.

`explain` gathers the sections from the rule class (message, docstring or ``why_zh``, the
first INVALID example and its fixed form or first VALID example, the fix's applicability)
and from the tip record (title and summary). The same `Explanation` is printed by
``python -m generator lint --explain CODE`` (`as_text`) and rendered as the rule's page of
the site (``generator/templates/site/lint_rule.md.j2``): one source for both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from generator.lint.engine import LintUsageError
from generator.lint.rules import RULES
from generator.lint.rules.base import Rule


@dataclass(frozen=True)
class Explanation:
    """The sections of a rule's documentation, in one language."""

    code: str
    name: str
    severity: str
    default: bool
    message: str
    why: str
    example: str
    use_instead: str
    fix: str | None
    fix_note: str
    tip: str
    tip_title: str
    tip_summary: str


def find_rule(code: str) -> type[Rule]:
    """The rule with ``code`` (any case).

    Raises:
        LintUsageError: no rule has that code.
    """
    wanted = code.strip().upper()
    for rule in RULES:
        if rule.code == wanted:
            return rule
    raise LintUsageError("unknown_code", code=code, last=RULES[-1].code)


def examples(rule: type[Rule]) -> tuple[str, str]:
    """The rule's example of the pattern and the code to use instead: its first INVALID
    example, and that example's fixed form, or the code it names ``instead``, or else the
    rule's first VALID example."""
    invalid = rule.invalid_examples()[0]
    return invalid.code, invalid.fixed or invalid.instead or rule.VALID[0]


def _tip_text(tip_id: str, lang: str) -> tuple[str, str]:
    """The title and summary of a tip record in ``lang`` (the id and nothing where the
    records cannot be read, as in an installed package without them)."""
    try:
        from generator.records.load import get_tip
        from generator.records.render import plain_text

        tip = get_tip(tip_id)
    except Exception:  # the explanation still stands without the record
        return tip_id, ""
    return plain_text(tip.title.get(lang)), " ".join(tip.summary.get(lang).split())


def explain(rule: type[Rule], lang: str = "en", tip: tuple[str, str] | None = None) -> Explanation:
    """The sections of ``rule``'s documentation in ``lang``; ``tip`` is the (title, summary)
    of its tip, read from the record when not given."""
    title, summary = tip if tip is not None else _tip_text(rule.tip, lang)
    example, instead = examples(rule)
    return Explanation(
        code=rule.code,
        name=rule.name,
        severity=rule.severity,
        default=rule.default,
        message=rule.message_in(lang),
        why=rule.why(lang),
        example=example.rstrip("\n"),
        use_instead=instead.rstrip("\n"),
        fix=rule.fix_safety,
        fix_note=(rule.fix_note if lang == "en" else rule.fix_note_zh).strip(),
        tip=rule.tip,
        tip_title=title,
        tip_summary=summary,
    )


def fix_text(exp: Explanation, labels: Mapping[str, str]) -> str:
    """The "Fix safety" section: the applicability, then the rule's own note."""
    L = labels
    base = L["lint_fix_text_" + (exp.fix or "none")]
    if not exp.fix_note:
        return base
    return base + ("" if base.endswith(("。", "：", "；")) else " ") + exp.fix_note


def as_text(exp: Explanation, labels: Mapping[str, str], rule_url: str, tip_url: str) -> str:
    """``--explain``: the sections as plain text, code indented by four spaces."""
    L = labels

    def code(text: str) -> str:
        return "\n".join(f"    {line}" if line else "" for line in text.splitlines())

    status = L["lint_default_on"] if exp.default else L["lint_opt_in"]
    parts = [
        f"{exp.code} ({exp.name}) "
        + L["lint_status"].format(severity=L["lint_severity_" + exp.severity], status=status),
        "",
        f"{L['lint_what']}{L['colon']}{exp.message}",
        "",
        f"{L['lint_why']}",
        exp.why,
        "",
        f"{L['lint_example']}",
        code(exp.example),
        "",
        f"{L['lint_use_instead']}",
        code(exp.use_instead),
        "",
        f"{L['lint_fix_safety']}{L['colon']}{fix_text(exp, L)}",
        "",
        f"{L['lint_col_tip']}{L['colon']}{exp.tip_title}{L['lint_paren'].format(text=tip_url)}",
    ]
    if exp.tip_summary:
        parts.append(exp.tip_summary)
    parts += ["", L["lint_rule_page"] + L["colon"] + rule_url]
    return "\n".join(parts) + "\n"
