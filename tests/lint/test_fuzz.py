"""The lint never crashes (issue 24, item 8): programs hypothesmith writes from Python's
grammar, and hostile mutants of the rules' INVALID examples (tests/lint/mutants.py), each
linted with every rule and fixed with the unsafe fixes too, in memory. For each: no internal
error, every output format renders, a fixed text compiles, and fixing it again changes
nothing. Seeds and counts are fixed and small, so this takes a few seconds;
``benchmarks/lint_fuzz.py`` runs the same checks on thousands of inputs."""

from __future__ import annotations

import pytest

from generator.lint import api, report
from generator.lint.edits import compiles
from tests.lint.mutants import mutants

FORMATS = ("text", "json", "sarif", "github", "gitlab")


def check(text: str, where: str) -> None:
    """Lint ``text`` as every format shows it, fix it, and fix the fixed text again."""
    run = api.run_source(text, "fuzz.py", select="ALL", diff=True, unsafe=True, isolated=True)
    assert not run.result.internal, (where, [e.message for e in run.result.errors])
    for fmt in FORMATS:
        report.outputs(run, fmt)
    fixed = api.run_source(text, "fuzz.py", select="ALL", fix=True, unsafe=True, isolated=True)
    assert not fixed.result.internal, (where, [e.message for e in fixed.result.errors])
    assert fixed.text == run.text, where  # --diff shows what --fix writes
    if fixed.changes:
        assert compiles(fixed.text), (where, fixed.text)
        again = api.run_source(
            fixed.text, "fuzz.py", select="ALL", fix=True, unsafe=True, isolated=True
        )
        assert not again.changes, (where, again.diff_text())
    claimed = sum(f.fix is not None for f in run.result.findings)
    assert claimed == 0 or fixed.fixed >= 1, where  # a fix shown is a fix applied


@pytest.mark.parametrize("seed", [7, 24])
def test_mutants_of_the_invalid_examples(seed: int) -> None:
    for where, text in mutants(seed, 60):
        check(text, where)


def test_programs_from_the_grammar() -> None:
    # imported here, not at collection: hypothesmith builds Python's grammar when imported
    # (about 2 s), which every xdist worker would pay
    hypothesis = pytest.importorskip("hypothesis")
    hypothesmith = pytest.importorskip("hypothesmith")

    @hypothesis.settings(
        max_examples=25,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(hypothesmith.from_grammar())
    def program(source: str) -> None:
        check(source, "hypothesmith")

    program()
