"""`python -m generator lint`: check training scripts against the tips.

Every rule is a small class (`generator.lint.rules`) that names the tip it enforces
and carries valid and invalid example code. `generator.lint.engine` finds, reads
and checks the files; `generator.lint.fix` applies safe fixes;
`generator.lint.report` writes text, JSON or SARIF; `generator.lint.docs`
renders the "Lint your script" page. Built on the standard ``ast`` module, and imports
no torch.
"""

from __future__ import annotations

from generator.lint.engine import Finding, LintResult, lint_paths, lint_source
from generator.lint.rules import RULES
from generator.lint.rules.base import Rule

__all__ = [
    "RULES",
    "Finding",
    "LintResult",
    "Rule",
    "lint_paths",
    "lint_source",
    "rule_codes",
    "rules_by_tip",
]


def rules_by_tip() -> dict[str, list[str]]:
    """Tip id -> the codes of the rules that enforce it (for the tip pages and records)."""
    out: dict[str, list[str]] = {}
    for rule in RULES:
        out.setdefault(rule.tip, []).append(rule.code)
    return out


def rule_codes() -> set[str]:
    """Every rule code (for validating the ``lint:`` field of records)."""
    return {rule.code for rule in RULES}
