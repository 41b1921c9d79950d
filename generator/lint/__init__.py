"""`python -m generator lint`: check training scripts against the tips.

Every rule is a small class (`generator.lint.rules`) that names the tip it enforces, carries
its message in English and Chinese, why the pattern is a problem, valid and invalid example
code, and the applicability of its fix. `generator.lint.engine` finds, reads and checks the
files with the rules that ``--select``/``--ignore`` and ``pyproject.toml``
(`generator.lint.config`) choose, and applies the ``noqa`` comments (`generator.lint.noqa`);
`generator.lint.analysis` and `generator.lint.training` hold what the rules share about a
file (names, training loops); `generator.lint.fix` applies safe (and, when asked, unsafe)
fixes; `generator.lint.api` runs all of it on files or on a text in memory, for the command,
the site's playground and editors (`run`, `run_source`); `generator.lint.report` writes text,
JSON or SARIF; `generator.lint.explain` gathers a rule's documentation, which ``--explain``
prints and `generator.lint.docs` renders as the rule's page beside the "Lint your script"
page. Built on the standard ``ast`` module: the
engine, rules, fixes and reports import nothing outside the standard library (no torch,
pydantic or YAML; the text report reads ``ui.yaml`` only when it is given no labels), so
they also run in a browser under Pyodide.
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
