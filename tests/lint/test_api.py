"""The lint's library API (generator/lint/api.py): `run` on files as the command runs them,
`run_source` on a text held in memory (the playground's script, an editor's unsaved
buffer), which never reads or writes the file it is named after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.lint import api, report
from generator.lint.engine import LintUsageError
from generator.lint.fix import fix_source

#: PTT002 has a safe fix, PTT011 an unsafe one, PTT012 (a whole-model save) none.
SOURCE = (
    "import torch\n\nscaler = torch.cuda.amp.GradScaler()\n"
    "state = torch.load('ckpt.pt')\ntorch.save(model, 'm.pt')\n"
)
SAFE = SOURCE.replace("torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cuda")')
BOTH = SAFE.replace("'ckpt.pt')", "'ckpt.pt', weights_only=True)")


def _rules(run: api.LintRun) -> list[tuple[str, int, str]]:
    return [(f.path, f.line, f.rule) for f in run.result.findings]


def test_a_text_is_linted_in_memory_under_its_name(tmp_path: Path) -> None:
    run = api.run_source(SOURCE, "train.py", root=tmp_path)
    assert _rules(run) == [
        ("train.py", 3, "PTT002"),
        ("train.py", 4, "PTT011"),
        ("train.py", 5, "PTT012"),
    ]
    assert (run.text, run.changes, run.fixed, run.exit_code) == (SOURCE, [], 0, 1)
    assert list(tmp_path.iterdir()) == []  # nothing written, nothing read
    zh = api.run_source(SOURCE, "train.py", lang="zh", isolated=True)
    assert [f.message for f in zh.result.findings] != [f.message for f in run.result.findings]


@pytest.mark.parametrize(("unsafe", "after"), [(False, SAFE), (True, BOTH)])
def test_fix_returns_the_fixed_text_and_what_is_left_without_writing(
    tmp_path: Path, unsafe: bool, after: str
) -> None:
    path = tmp_path / "train.py"
    path.write_text("stale text on disk: never read\n", encoding="utf-8")
    run = api.run_source(SOURCE, "train.py", root=tmp_path, fix=True, unsafe=unsafe)
    assert run.text == after == fix_source(SOURCE, unsafe=unsafe)[0]
    assert run.source == SOURCE and run.fixed == run.fixable == (2 if unsafe else 1)
    left = {r for _, _, r in _rules(run)}
    assert left == ({"PTT012"} if unsafe else {"PTT011", "PTT012"})  # linted again
    assert path.read_text(encoding="utf-8") == "stale text on disk: never read\n"
    # --diff: the same fixes, the findings of the text as given, nothing applied
    shown = api.run_source(SOURCE, "train.py", root=tmp_path, diff=True, unsafe=unsafe)
    assert shown.text == after and shown.fixed == 0 and len(shown.result.findings) == 3
    assert shown.diff_text().startswith("--- a/train.py\n+++ b/train.py\n")
    assert shown.exit_code == 1
    clean = api.run_source(after, "train.py", diff=True, unsafe=unsafe, isolated=True)
    assert (clean.changes, clean.text, clean.exit_code) == ([], after, 0)


def test_the_settings_are_those_of_the_file_s_project(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytorch-tips.lint]\nignore = ["PTT012"]\n'
        '[tool.pytorch-tips.lint.per-file-ignores]\n"scripts/*" = ["PTT011"]\n',
        encoding="utf-8",
    )
    codes = {r for _, _, r in _rules(api.run_source(SOURCE, "train.py", root=tmp_path))}
    assert codes == {"PTT002", "PTT011"}
    nested = api.run_source(SOURCE, "scripts/a.py", root=tmp_path)  # neither file exists
    assert {r for _, _, r in _rules(nested)} == {"PTT002"}
    assert nested.result.findings[0].path == "scripts/a.py"
    absolute = api.run_source(SOURCE, str(tmp_path / "scripts" / "a.py"))
    assert _rules(absolute) == [(str(tmp_path / "scripts" / "a.py"), 3, "PTT002")]
    alone = api.run_source(SOURCE, "train.py", root=tmp_path, isolated=True)
    assert len(alone.result.findings) == 3
    chosen = api.run_source(SOURCE, "x.py", select="PTT01", ignore="PTT012", isolated=True)
    assert [r for _, _, r in _rules(chosen)] == ["PTT011"]
    with pytest.raises(LintUsageError):
        api.run_source(SOURCE, "x.py", select="PTT999")


def test_a_text_that_cannot_be_checked_is_one_error_with_its_position() -> None:
    broken = api.run_source("import torch\ndef f(:\n", "t.py")
    assert broken.result.findings == [] and broken.exit_code == 1
    assert [str(e) for e in broken.result.errors] == ["t.py:2:7: syntax error: invalid syntax"]
    surrogate = api.run_source("x = 1\ny = '\udcff'\n", "t.py", fix=True)
    (error,) = surrogate.result.errors
    assert (error.line, error.column) == (2, 6) and "U+DCFF" in error.message
    assert surrogate.changes == [] and surrogate.text == "x = 1\ny = '\udcff'\n"
    bom = api.run_source("\ufeff" + SOURCE, "t.py", fix=True)
    assert bom.text == SAFE and bom.result.errors == []


def test_in_memory_and_on_disk_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(SOURCE, encoding="utf-8")
    cases: list[dict[str, Any]] = [
        {},
        {"diff": True},
        {"diff": True, "unsafe": True},
        {"lang": "zh"},
    ]
    for options in cases:
        on_disk = api.run(["train.py"], **options)
        in_memory = api.run_source(SOURCE, "train.py", **options)
        assert on_disk.result.findings == in_memory.result.findings, options
        assert on_disk.diff_text() == in_memory.diff_text(), options
        assert on_disk.exit_code == in_memory.exit_code, options


def test_run_fixes_the_files_and_lints_them_again(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(SOURCE, encoding="utf-8")
    shown = api.run([tmp_path], fix=True, diff=True)  # --diff wins: nothing written
    assert path.read_text(encoding="utf-8") == SOURCE
    assert (shown.fixed, shown.fixable, len(shown.result.findings)) == (0, 1, 3)
    before, out, after = report.outputs(shown, "text")
    assert (before, out, after) == ("", shown.diff_text(), report.would_fix(shown))
    fixed = api.run(str(tmp_path), fix=True)  # one path, as a string or a Path
    assert path.read_text(encoding="utf-8") == SAFE
    assert fixed.fixed == 1 and fixed.result.sources[str(path)] == SAFE
    assert {f.rule for f in fixed.result.findings} == {"PTT011", "PTT012"}
    assert fixed.exit_code == 1
    assert "Fixed 1 finding." in report.outputs(fixed, "text")[1]
    with pytest.raises(LintUsageError):
        api.run([tmp_path / "missing.py"])
