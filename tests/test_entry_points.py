"""The home page's entry points: tips/_problems.yaml and tips/_checklist.yaml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.records.problems import (
    CHECKLIST_FILE,
    PAGES_FILE,
    PROBLEMS_FILE,
    check_entry_points,
)


def test_the_committed_files_are_valid_and_cover_the_six_problems(tip_ids: frozenset[str]) -> None:
    entry_points, problems = check_entry_points(set(tip_ids))
    assert problems == []
    assert entry_points is not None
    assert set(entry_points.problems) == {
        "out-of-memory",
        "slow-training",
        "loss-is-nan",
        "several-gpus",
        "reproducibility",
        "checkpoints",
    }
    assert 12 <= len(entry_points.checklist.checks) <= 24  # one page, read in one sitting


def _copy(tmp_path: Path, name: str, edit: tuple[str, str]) -> Path:
    source = {"problems": PROBLEMS_FILE, "checklist": CHECKLIST_FILE, "pages": PAGES_FILE}[name]
    text = source.read_text(encoding="utf-8")
    assert edit[0] in text
    path = tmp_path / source.name
    path.write_text(text.replace(edit[0], edit[1], 1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "edit", "field", "reason"),
    [
        (
            "problems",
            ("    - measure-gpu-memory\n", "    - measure-gpu-memroy\n"),
            "out-of-memory.tips.0",
            "no tip has the id 'measure-gpu-memroy'",
        ),
        (
            "checklist",
            ("  - tip: seed-everything\n", "  - tip: seed-everythin\n"),
            "checks.0.tip",
            "no tip has the id 'seed-everythin'",
        ),
        (
            "problems",
            ("    zh: 显存不够用\n", "    zh: 显卡内存不够用\n"),
            "out-of-memory.title.zh",
            "the glossary term is '显存'",
        ),
        (
            "checklist",
            ("  en: Before you launch\n", "  en: Before you launch\n  fr: Avant\n"),
            "title.fr",
            "Extra inputs are not permitted",
        ),
        (
            "pages",
            ("    zh: 生成训练脚本\n", "    zh: 显卡内存里生成训练脚本\n"),
            "composer.title.zh",
            "the glossary term is '显存'",
        ),
        (
            "pages",
            ("  command: compose\n", "  command: compose --amp\n"),
            "composer.command",
            "should match pattern",
        ),
    ],
    ids=[
        "unknown-problem-tip",
        "unknown-checklist-tip",
        "glossary",
        "unknown-key",
        "pages-glossary",
        "pages-command",
    ],
)
def test_a_broken_file_is_reported_with_its_line(
    tmp_path: Path,
    tip_ids: frozenset[str],
    name: str,
    edit: tuple[str, str],
    field: str,
    reason: str,
) -> None:
    path = _copy(tmp_path, name, edit)
    kwargs = {f"{name}_file": path}
    _, problems = check_entry_points(set(tip_ids), **kwargs)
    assert len(problems) == 1, problems
    problem = problems[0]
    assert problem.field == field and reason in problem.reason, problem
    line = path.read_text(encoding="utf-8").splitlines()[problem.line - 1]
    assert re.search(r"memroy|everythin|显卡内存|fr:|--amp", line), (problem.line, line)


def test_validate_reports_an_unknown_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.records import load as records
    from generator.records import problems

    path = _copy(tmp_path, "problems", ("    - find-max-batch-size\n", "    - no-such-tip\n"))
    monkeypatch.setattr(problems, "PROBLEMS_FILE", path)
    _, found = records.validate()
    assert [p.reason for p in found if p.file.endswith("_problems.yaml")] == [
        "no tip has the id 'no-such-tip'"
    ]
