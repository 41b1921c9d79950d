"""The home page's entry points: tips/_problems.yaml and tips/_checklist.yaml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from generator.records.problems import (
    CHECKLIST_FILE,
    PAGES_FILE,
    PROBLEMS_FILE,
    check_entry_points,
)
from generator.records.schema import Tip


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
    for slug, entry in entry_points.problems.items():  # every page opens with its triage
        assert 2 <= len(entry.triage) <= 8, slug
        assert {t for line in entry.triage for t in line.tips} <= set(entry.tips), slug
    assert {s for s, e in entry_points.problems.items() if e.doctor} == {
        "out-of-memory",
        "slow-training",
    }


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
            ("    - find-max-batch-size\n", "    - find-max-batch-memroy\n"),
            "out-of-memory.tips.*",
            "no tip has the id 'find-max-batch-memroy'",
        ),
        (
            "problems",
            ("      tips: [expandable-segments-allocator]\n", "      tips: [expandable-memroy]\n"),
            "out-of-memory.triage.*.tips.0",
            "no tip has the id 'expandable-memroy'",
        ),
        (
            "problems",
            ("      tips: [chunked-cross-entropy]\n", "      tips: [channels-last]\n"),
            "out-of-memory.triage.*.tips.0",
            "'channels-last' is not in the problem's own list of tips",
        ),
        (
            "problems",
            ("        zh: 只在评估时显存不够\n", "        zh: 只在评估时显卡内存不够\n"),
            "out-of-memory.triage.*.when.zh",
            "the glossary term is '显存'",
        ),
        (
            "problems",
            ("        zh: 只在评估时显存不够\n", "        zh: 只在评估时显存增加 2 倍\n"),
            "out-of-memory.triage.*.when.zh",
            "'增加 2 倍': a multiple right after an increase verb",
        ),
        (
            "problems",
            ("  helps: multi-gpu\n", "  helps: multi-gpus\n"),
            "several-gpus.helps",
            "helps must be one of cpu, cuda, multi-gpu",
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
        "unknown-triage-tip",
        "triage-tip-not-listed",
        "triage-glossary",
        "triage-bei",
        "unknown-device",
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
    # An index in the field (``*`` here) depends on the file's order: it must name the entry
    # the edit broke, which the path leads to in the edited file.
    assert re.fullmatch(re.escape(field).replace(r"\*", r"\d+"), problem.field), problem
    assert reason in problem.reason, problem
    node = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key in problem.field.split("."):
        node = node[int(key)] if isinstance(node, list) else node[key]
    assert str(node) in edit[1], (problem.field, node)
    line = path.read_text(encoding="utf-8").splitlines()[problem.line - 1]
    assert re.search(r"memroy|everythin|显卡内存|fr:|--amp|channels-last|gpus|倍", line), (
        problem.line,
        line,
    )


def test_validate_reports_an_unknown_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.records import load as records
    from generator.records import problems

    path = _copy(tmp_path, "problems", ("    - find-max-batch-size\n", "    - no-such-tip\n"))
    monkeypatch.setattr(problems, "PROBLEMS_FILE", path)
    _, found = records.validate()
    assert [p.reason for p in found if p.file.endswith("_problems.yaml")] == [
        "no tip has the id 'no-such-tip'"
    ]


def test_the_doctor_is_offered_on_its_problems_once_its_page_exists(
    tips: list[Tip],
    tip_ids: frozenset[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Measure instead of guessing: the memory and speed pages link `pytorch-tips doctor` when
    docs/doctor.md exists (the build stays green before it does), the other pages never."""
    from generator.records import problems as module
    from generator.records.ui import labels

    entry_points, _ = check_entry_points(set(tip_ids))
    assert entry_points is not None
    by_id = {str(t.id): t for t in tips}
    for page, offered in ((None, set()), ("doctor.md", {"out-of-memory", "slow-training"})):
        monkeypatch.setattr(module, "doctor_page", lambda page=page: page)
        files = module.page_files(entry_points, by_id, labels(), langs=("en",))
        linked = {p.stem for p, text in files.items() if "(../doctor.md)" in text}
        assert linked == offered, page
