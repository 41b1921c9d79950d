"""The lint's command line as ruff users expect it (issue 16): ``--list-rules``, ``--explain``,
``--lang zh``, ``--help``, file-level and multi-line ``noqa``, ``pyproject.toml`` settings and
their errors, opt-in rules, fix applicability and a ``--diff`` without difflib's autojunk."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

import pytest

from generator.lint import RULES, lint_paths, lint_source
from generator.lint.engine import select_rules
from generator.lint.fix import fix_source, unified_diff
from tests.helpers import run_cli

BAD_LOAD = 'import torch\nstate = torch.load("ckpt.pt")\n'
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _write(folder: Path, name: str, content: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def _codes(*args: str) -> list[tuple[str, int, str]]:
    proc = run_cli("lint", *args, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return [(Path(i["path"]).name, i["line"], i["rule"]) for i in json.loads(proc.stdout)]


# --- listing and explaining the rules -------------------------------------------------------


def test_list_rules_in_text_and_json() -> None:
    proc = run_cli("lint", "--list-rules")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [r.code for r in RULES]
    pt11 = next(line for line in lines if line.startswith("PTT011"))
    assert "error" in pt11 and "unsafe fix" in pt11 and "torch-load-weights-only" in pt11
    items = json.loads(run_cli("lint", "--list-rules", "--format", "json").stdout)
    assert [i["code"] for i in items] == [r.code for r in RULES]
    first = items[0]
    assert set(first) == {"code", "name", "severity", "default", "fix", "tip", "message", "url"}
    assert first["url"].endswith("lint/rules/PTT001/")
    zh = json.loads(run_cli("lint", "--list-rules", "--format", "json", "--lang", "zh").stdout)
    assert all(_CJK.search(i["message"]) for i in zh)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_prints_the_sections_of_the_rule_page(lang: str) -> None:
    from generator.lint.explain import explain
    from generator.records.ui import labels

    proc = run_cli("lint", "--explain", "ptt011", "--lang", lang)
    assert proc.returncode == 0, proc.stderr
    L = labels()[lang]
    out = proc.stdout
    exp = explain(next(r for r in RULES if r.code == "PTT011"), lang)
    for label in ("lint_what", "lint_why", "lint_example", "lint_use_instead", "lint_fix_safety"):
        assert L[label] in out
    assert exp.message in out and exp.why in out and exp.tip_title in out
    assert '    state = torch.load("ckpt.pt", weights_only=True)' in out  # use instead, indented
    assert "weights_only" in exp.fix_note and exp.fix_note in out  # why the fix is unsafe
    assert out.rstrip().endswith("lint/rules/PTT011/")


def test_explain_an_unknown_code_is_a_usage_error() -> None:
    proc = run_cli("lint", "--explain", "PTT999")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("error: unknown rule code 'PTT999'")


def test_help_documents_noqa_exit_codes_and_formats() -> None:
    proc = run_cli("lint", "--help")
    assert proc.returncode == 0
    text = proc.stdout
    for needle in (
        "# noqa: PTT020",
        "# pytorch-tips: noqa",
        "[tool.pytorch-tips.lint]",
        "per-file-ignores",
        "exit status",
        "2  usage error",
        "sarif",
        "--unsafe-fixes",
        "--list-rules",
        "--explain",
    ):
        assert needle in text, needle


def test_no_paths_is_a_usage_error() -> None:
    proc = run_cli("lint")
    assert proc.returncode == 2 and proc.stderr.startswith("error: ")


# --- noqa -----------------------------------------------------------------------------------


def test_noqa_on_any_line_of_a_multi_line_statement() -> None:
    source = (
        "import torch\n"
        "a = torch.load(\n    'a.pt',\n    map_location='cpu',\n)  # noqa: PTT011\n"
        "b = torch.load(  # noqa: PTT011\n    'b.pt',\n)\n"
        "c = torch.load(\n    'c.pt',  # noqa\n)\n"
        "d = torch.load(\n    'd.pt',\n)  # noqa: PTT012\n"
        "for x in torch.load('e.pt'):  # noqa: PTT011\n    pass\n"
        "for y in data:  # noqa: PTT011\n    z = torch.load(y)\n"
    )
    found = [(f.line, f.rule) for f in lint_source(source)]
    # only d (another code) and z (the noqa is on the loop's header, not on its body)
    assert found == [(12, "PTT011"), (18, "PTT011")]


def test_noqa_in_a_string_is_not_a_comment() -> None:
    source = "import torch\nx = torch.load('# noqa')\ny = '# pytorch-tips: noqa'\n"
    assert [f.rule for f in lint_source(source)] == ["PTT011"]


def test_file_level_noqa() -> None:
    body = BAD_LOAD + "torch.save(model, 'm.pt')\n"
    assert {f.rule for f in lint_source(body)} == {"PTT011", "PTT012"}
    assert lint_source("# pytorch-tips: noqa\n" + body) == []
    only = lint_source(body + "# pytorch-tips: noqa: PTT011\n")
    assert [f.rule for f in only] == ["PTT012"]
    # at the end of a line of code it is an ordinary noqa for that line, not for the file
    trailing = lint_source(BAD_LOAD.replace(")\n", ")  # pytorch-tips: noqa\n") + body)
    assert {f.rule for f in trailing} == {"PTT011", "PTT012"}


# --- pyproject.toml ---------------------------------------------------------------------------


def test_pyproject_select_ignore_and_per_file_ignores(tmp_path: Path) -> None:
    body = BAD_LOAD + "torch.save(model, 'm.pt')\n"
    _write(tmp_path, "train.py", body)
    _write(tmp_path, "tests/test_x.py", body)
    _write(tmp_path, "legacy/old.py", body)
    _write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.pytorch-tips.lint]\nselect = ["PTT01"]\nignore = ["PTT013"]\n\n'
        '[tool.pytorch-tips.lint.per-file-ignores]\n"tests/*" = ["PTT012"]\n"old.py" = ["ALL"]\n',
    )
    assert sorted(_codes(str(tmp_path))) == [
        ("test_x.py", 2, "PTT011"),
        ("train.py", 2, "PTT011"),
        ("train.py", 3, "PTT012"),
    ]
    # --select replaces the configured select; --ignore adds to the configured ignore
    assert _codes(str(tmp_path / "train.py"), "--select", "PTT012") == [("train.py", 3, "PTT012")]
    assert _codes(str(tmp_path / "train.py"), "--ignore", "PTT012") == [("train.py", 2, "PTT011")]
    # --isolated ignores the file; a pyproject.toml without the table is not a configuration
    assert len(_codes(str(tmp_path), "--isolated")) == 6
    _write(tmp_path / "legacy", "pyproject.toml", '[project]\nname = "legacy"\n')
    assert ("old.py", 2, "PTT011") not in _codes(str(tmp_path))


def test_the_nearest_configuration_applies_and_config_names_one(tmp_path: Path) -> None:
    _write(tmp_path, "pyproject.toml", '[tool.pytorch-tips.lint]\nignore = ["PTT011"]\n')
    _write(tmp_path, "sub/pyproject.toml", '[tool.pytorch-tips.lint]\nignore = ["PTT012"]\n')
    _write(tmp_path, "a.py", BAD_LOAD + "torch.save(model, 'm.pt')\n")
    _write(tmp_path, "sub/b.py", BAD_LOAD + "torch.save(model, 'm.pt')\n")
    assert sorted(_codes(str(tmp_path))) == [("a.py", 3, "PTT012"), ("b.py", 2, "PTT011")]
    other = _write(
        tmp_path / "conf", "pyproject.toml", '[tool.pytorch-tips.lint]\nselect = ["PTT011"]\n'
    )
    assert sorted(_codes(str(tmp_path), "--config", str(other))) == [
        ("a.py", 2, "PTT011"),
        ("b.py", 2, "PTT011"),
    ]


@pytest.mark.parametrize(
    ("text", "position", "reason"),
    [
        pytest.param(
            "[tool.pytorch-tips.lint]\nselect = [PTT011\n", ":2:", "invalid TOML", id="toml"
        ),
        pytest.param(
            '[tool.pytorch-tips.lint]\nselect = ["PTT011"]\nignores = ["PTT012"]\n',
            ":3:1:",
            "ignores: unknown key",
            id="unknown-key",
        ),
        pytest.param(
            '[tool.pytorch-tips.lint]\n\nignore = ["PTT011", "XYZ1"]\n',
            ":3:1:",
            "unknown rule code 'XYZ1'",
            id="unknown-code",
        ),
        pytest.param(
            '[tool.pytorch-tips.lint]\nselect = "PTT011"\n', ":2:1:", "expected a list", id="type"
        ),
        pytest.param(
            '[tool.pytorch-tips.lint]\n[tool.pytorch-tips.lint.per-file-ignores]\n"tests/*" = ["PTT9"]\n',
            ":3:1:",
            "unknown rule code 'PTT9'",
            id="per-file-code",
        ),
    ],
)
def test_a_bad_configuration_is_one_line_with_file_and_position(
    text: str, position: str, reason: str, tmp_path: Path
) -> None:
    config = _write(tmp_path, "pyproject.toml", text)
    _write(tmp_path, "train.py", BAD_LOAD)
    proc = run_cli("lint", str(tmp_path))
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: {config}{position}") and reason in line, line
    assert "Traceback" not in proc.stderr


def test_opt_in_rules_run_only_when_selected(monkeypatch: pytest.MonkeyPatch) -> None:
    rule = next(r for r in RULES if r.code == "PTT038")
    monkeypatch.setattr(rule, "default", False)
    assert rule not in select_rules()
    assert rule in select_rules("PTT038") and rule in select_rules("PTT03")
    assert rule in select_rules("ALL") and rule not in select_rules("ALL", "PTT038")
    source = "from torch import nn\nmodel = nn.DataParallel(model)\n"
    assert lint_source(source) == []  # the default rules only


# --- fixes ----------------------------------------------------------------------------------


def test_unsafe_fixes_need_the_flag() -> None:
    fixed, count = fix_source(BAD_LOAD)
    assert (fixed, count) == (BAD_LOAD, 0)
    fixed, count = fix_source(BAD_LOAD, unsafe=True)
    assert count == 1 and "weights_only=True" in fixed
    (finding,) = lint_source(BAD_LOAD)
    assert finding.fix == "unsafe" and not finding.fixable and finding.edits


def test_diff_does_not_show_unchanged_lines_as_changed(tmp_path: Path) -> None:
    lines = [f"x{i} = 1\n\n" for i in range(150)]
    before = "import torch\n" + "".join(lines[:5])
    before += "a = torch.cuda.amp.GradScaler()\n\n\n\nb = torch.cuda.amp.GradScaler()\n"
    before += "".join(lines[5:])
    path = _write(tmp_path, "long.py", before)
    proc = run_cli("lint", str(path), "--diff")
    changed = [
        line
        for line in proc.stdout.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert len(changed) == 4, proc.stdout  # the two calls, removed and added; no blank line
    # difflib's default (autojunk) would show the blank lines between them as changed too
    after = before.replace("torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cuda")')
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    plain = [
        ln for ln in difflib.unified_diff(a, b) if ln[:1] in "+-" and ln[:3] not in ("+++", "---")
    ]
    assert len(plain) > len(changed)
    ours = unified_diff(a, b, "a", "b")
    assert ours == proc.stdout.replace(f"a/{path}", "a").replace(f"b/{path}", "b").replace(
        f"--- {path}", "--- a"
    ).replace(f"+++ {path}", "+++ b")


def test_lint_paths_reports_rules_per_file(tmp_path: Path) -> None:
    _write(
        tmp_path, "pyproject.toml", '[tool.pytorch-tips.lint.per-file-ignores]\n"b.py" = ["ALL"]\n'
    )
    _write(tmp_path, "a.py", BAD_LOAD)
    _write(tmp_path, "b.py", BAD_LOAD)
    result = lint_paths([tmp_path])
    by_name = {Path(p).name: rules for p, rules in result.rules.items()}
    assert by_name["b.py"] == () and len(by_name["a.py"]) == sum(r.default for r in RULES)
    assert [Path(f.path).name for f in result.findings] == ["a.py"]
