"""The lint rules against the tip records: each record's ``lint`` codes name rules that
enforce it, and each rule's tip lists the rule's code.

This cross-check lives here, where both the rules and the records are known; it runs as one of
the ``cross_checks`` of `generator.records.load.validate` wherever the whole picture is wanted
(``python -m generator validate``, the site build).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from generator.command import relative
from generator.errors import Problem
from generator.lint.rules import RULES
from generator.records.schema import Tip
from generator.records.yamlio import Document


def rule_code_problems(
    loaded: Mapping[Path, tuple[Tip, Document]], whole_corpus: bool
) -> list[Problem]:
    """Each record's ``lint`` codes name rules of this tip; each rule's tip lists its code."""
    tip_of = {rule.code: rule.tip for rule in RULES}
    problems = []
    listed: dict[str, set[str]] = {}
    for path, (tip, doc) in loaded.items():
        listed[str(tip.id)] = set(tip.lint)
        for i, code in enumerate(tip.lint):
            owner = tip_of.get(code)
            if owner is None:
                reason = f"no lint rule has the code {code}"
            elif owner != tip.id:
                reason = f"{code} enforces the tip {owner!r}, not this one"
            else:
                continue
            problems.append(Problem(relative(path), doc.line_of(("lint", i)), f"lint[{i}]", reason))
    if whole_corpus:
        for rule in RULES:
            if rule.tip not in listed:
                problems.append(
                    Problem("generator/lint/rules", 0, rule.code, f"names no tip: {rule.tip!r}")
                )
            elif rule.code not in listed[rule.tip]:
                path = next(p for p, (t, _) in loaded.items() if t.id == rule.tip)
                problems.append(
                    Problem(
                        relative(path),
                        1,
                        "lint",
                        f"the rule {rule.code} enforces this tip: list it",
                    )
                )
    return problems
