"""The lint's CI formats (issue 24, item 6: ``--format github`` and ``gitlab``, as ruff
writes them) and its Chinese text output (issue 26, lint part: full-width punctuation after
Chinese, columns padded by display width, every error line translated)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from generator import cli
from generator.lint import api
from generator.lint.ci import github, gitlab
from generator.lint.report import display_width

SOURCE = (
    "import torch\n"
    "state = torch.load(p)\n"  # PTT011, error
    "for x, y in loader:\n"
    "    x = x.cuda()\n"
    "    loss = model(x).sum()\n"
    "    loss.backward()\n"
    "    optimizer.step()\n"
    "    print(loss.item())\n"  # PTT020, warning
)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["lint", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_github_annotations_follow_the_severity_and_escape_the_runner_s_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "a,b:c%.py"
    path.write_text(SOURCE, encoding="utf-8")
    (tmp_path / "broken.py").write_text("def f(:\n", encoding="utf-8")
    code, out, _ = run(capsys, str(tmp_path), "--format", "github")
    assert code == 1
    lines = out.splitlines()
    assert all(re.match(r"::(error|warning|notice) title=pytorch-tips", ln) for ln in lines)
    name = str(path).replace("%", "%25").replace(":", "%3A").replace(",", "%2C")
    load = next(ln for ln in lines if "PTT011" in ln)
    assert load.startswith(f"::error title=pytorch-tips (PTT011),file={name},line=2,col=9,")
    assert f"::{str(path).replace('%', '%25')}:2:9: PTT011 `torch.load`" in load
    assert next(ln for ln in lines if "PTT020" in ln).startswith("::warning ")
    broken = next(ln for ln in lines if "broken.py" in ln)
    assert broken.startswith("::error title=pytorch-tips,file=") and "syntax error" in broken
    result = api.run_source(SOURCE, "t.py", isolated=True).result
    result.findings = [dataclasses.replace(f, message="two\nlines 100%") for f in result.findings]
    assert github(result).count("two%0Alines 100%25 (tip: ") == 2


def test_gitlab_code_quality_report(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CI_PROJECT_DIR", raising=False)
    first = api.run_source(SOURCE, str(tmp_path / "src" / "t.py"), isolated=True).result
    report = json.loads(gitlab(first, project=str(tmp_path)))
    assert [(i["check_name"], i["severity"]) for i in report] == [
        ("PTT011", "major"),
        ("PTT020", "minor"),
    ]
    issue = report[0]
    assert issue["description"].startswith("PTT011: ") and issue["location"] == {
        "path": "src/t.py",
        "positions": {"begin": {"line": 2, "column": 9}, "end": {"line": 2, "column": 22}},
    }
    assert re.fullmatch("[0-9a-f]{64}", issue["fingerprint"])
    # lines added above a finding do not change its fingerprint
    moved = api.run_source(
        "# a comment\n\n" + SOURCE, str(tmp_path / "src" / "t.py"), isolated=True
    )
    again = json.loads(gitlab(moved.result, project=str(tmp_path)))
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in report]
    assert again[0]["location"]["positions"]["begin"]["line"] == 4
    # identical findings are told apart
    twice = api.run_source(SOURCE + "state = torch.load(p)\n", "t.py", isolated=True).result
    prints = [i["fingerprint"] for i in json.loads(gitlab(twice, project=""))]
    assert len(prints) == len(set(prints)) == 3
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path / "src"))
    assert json.loads(gitlab(first))[0]["location"]["path"] == "t.py"


def test_gitlab_reports_a_file_that_could_not_be_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.py").write_text("def f(:\n", encoding="utf-8")
    code, out, err = run(capsys, str(tmp_path / "broken.py"), "--format", "gitlab")
    issues = json.loads(out)
    assert code == 1 and err.count("\n") == 1
    assert [(i["check_name"], i["severity"]) for i in issues] == [("file-error", "critical")]


# --- Chinese ---------------------------------------------------------------------------------


def test_chinese_text_uses_full_width_punctuation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.py"
    path.write_text(SOURCE + "scaler = torch.cuda.amp.GradScaler()\n", encoding="utf-8")
    code, out, _ = run(capsys, str(path), "--lang", "zh", "--select", "ALL")
    assert code == 1
    assert "（技巧：save-load-state-dict）" in out and "(技巧" not in out and "技巧:" not in out
    summary = out.splitlines()[-1]
    assert summary.startswith("共检查 1 个文件，其中 1 个文件有 ") and "；另有" in summary
    assert "; " not in summary and "。 " not in summary
    code, out, _ = run(capsys, str(path), "--lang", "zh", "--fix")
    assert out.splitlines()[-1].startswith("已修复 1 个问题。共检查")


def test_list_rules_columns_line_up_in_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    for lang in ("en", "zh"):
        code, out, _ = run(capsys, "--list-rules", "--lang", lang)
        starts = set()
        for line in out.splitlines():
            name = re.search(r"  ([a-z0-9]+(?:-[a-z0-9]+)+)", line)
            assert name, line
            starts.add(display_width(line[: name.start(1)]))
        assert code == 0 and len(starts) == 1, (lang, starts)


def test_explain_in_chinese_uses_full_width_brackets(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--explain", "PTT020", "--lang", "zh")
    assert code == 0 and "[警告，默认启用]" in out.splitlines()[0]
    tip = next(ln for ln in out.splitlines() if ln.startswith("对应技巧："))
    assert tip.endswith("（tips/avoid-cpu-gpu-syncs/）")


@pytest.mark.parametrize(
    ("args", "text", "code"),
    [
        (["--select", "PTT999", "."], "错误：未知的规则编号 'PTT999'（编号从 PTT001 到", 2),
        (["missing.py"], "错误：missing.py：文件或文件夹不存在", 2),
        ([], "错误：请给出要检查的文件或文件夹", 2),
        (["--explain", "PTT999"], "错误：未知的规则编号 'PTT999'", 2),
        (["broken.py"], "broken.py:1:7: 语法错误：", 1),  # the position stays machine-readable
        (["latin.py"], "latin.py:2:6: 不是有效的 utf-8：字节 0xe9 无法解码", 1),
        (["."], "pyproject.toml:2:1：[tool.pytorch-tips.lint] select：应为规则编号列表", 2),
    ],
    ids=["code", "missing", "no-paths", "explain", "syntax", "decode", "config"],
)
def test_every_error_line_is_translated(
    args: list[str],
    text: str,
    code: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.py").write_text("def f(:\n", encoding="utf-8")
    (tmp_path / "latin.py").write_bytes(b"x = 1\ny = '\xe9'\n")
    if args == ["."]:
        (tmp_path / "pyproject.toml").write_text(
            '[tool.pytorch-tips.lint]\nselect = "PTT011"\n', encoding="utf-8"
        )
    got, _, err = run(capsys, *args, "--lang", "zh")
    line = err.splitlines()[0]
    assert got == code and text in line, err


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lint_page_documents_the_editor_ci_and_exit_statuses(lang: str) -> None:
    from generator.lint.api import EXIT_CODES
    from generator.lint.cli import EPILOG
    from generator.lint.docs import page_markdown

    page = page_markdown(lang)
    for needle in (
        '"glspc.serverCommand": "pytorch-tips"',  # VS Code
        'vim.lsp.config("pytorch_tips"',  # Neovim
        "[language-server.pytorch-tips]",  # Helix
        "eglot-server-programs",  # Emacs
        f'"lang": "{lang}"',
        "pytorch-tips lint . --format github",
        "codequality: gl-code-quality-report.json",
    ):
        assert needle in page, needle
    rows = re.findall(r"^\| (\d) \| ", page, re.M)
    documented = re.findall(r"^  (\d)  ", EPILOG, re.M)
    assert [int(r) for r in rows] == [int(d) for d in documented] == list(EXIT_CODES)
