"""The command-line interface: help everywhere, filters, clear errors, no torch at start-up."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from generator import paths
from generator.cli import build_parser, main
from tests.helpers import run_cli

SUBCOMMANDS = sorted(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]


def test_top_level_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for name in SUBCOMMANDS:
        assert name in out


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert f"usage: python -m generator {command}" in capsys.readouterr().out


def test_list_filters_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    everything = json.loads(capsys.readouterr().out)
    assert len(everything) >= 1
    category = everything[0]["category"]
    assert main(["list", "--category", category, "--json"]) == 0
    some = json.loads(capsys.readouterr().out)
    assert some and all(t["category"] == category for t in some)
    for device in ("cpu", "cuda"):
        assert main(["list", "--device", device, "--json"]) == 0
        ids = {t["id"] for t in json.loads(capsys.readouterr().out)}
        expected = {t["id"] for t in everything if device in t["hardware"]["devices"]}
        assert ids == expected and 0 < len(ids) < len(everything), device
        assert main(["list", "--device", device]) == 0
        rows = capsys.readouterr().out.splitlines()
        assert {row.split()[0] for row in rows[:-2]} == ids  # one row per tip, then the count
        assert rows[-1] == f"{len(ids)} tip(s)."
    tag = everything[0]["tags"][0]
    assert main(["list", "--tag", tag, "--json"]) == 0
    assert all(tag in t["tags"] for t in json.loads(capsys.readouterr().out))


def test_list_with_no_match_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator.records import load as records

    only = [records.get_tip("zero-grad-set-to-none")]
    monkeypatch.setattr(records, "load_tips", lambda: only)
    assert main(["list", "--category", "memory"]) == 1
    assert "no tip matches these filters" in capsys.readouterr().err


def test_bad_choice_is_a_usage_error_without_traceback() -> None:
    proc = run_cli("list", "--category", "nonsense")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr and "Traceback" not in proc.stderr


def test_show_in_both_languages(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "zero-grad-set-to-none"]) == 0
    en = capsys.readouterr().out
    assert "Zero gradients by setting them to None" in en
    assert "== Why it works ==" in en and "== After" in en and "set_to_none=True" in en
    assert main(["show", "zero-grad-set-to-none", "--lang", "zh"]) == 0
    zh = capsys.readouterr().out
    assert "清零梯度" in zh and "== 原理 ==" in zh and "== 注意事项 ==" in zh


def test_show_in_chinese_translates_its_labels(capsys: pytest.CaptureFixture[str]) -> None:
    """Category, impacts and devices by their Chinese labels (not their ids), full-width
    punctuation after every Chinese label the command writes."""
    assert main(["show", "tf32-matmul", "--lang", "zh"]) == 0
    zh = capsys.readouterr().out
    lines = zh.splitlines()
    assert lines[3] == "分类：提速：计算；收益：速度；设备：CPU、CUDA GPU"
    assert "计算能力 ≥ 8.0" in lines and "最低 torch 版本：2.9" in lines
    assert "在生成的训练脚本中：python -m generator compose --tf32" in lines
    assert "== 改进后（snippets/tf32-matmul/after.py） ==" in lines
    assert (
        "- Numerical accuracy：https://pytorch.org/docs/stable/notes/numerical_accuracy.html"
        in lines
    )
    # No half-width colon or parenthesis right after Chinese outside the code (indented).
    prose = [ln for ln in lines if not ln.startswith("    ")]
    assert not [ln for ln in prose if re.search(r"[\u4e00-\u9fff][:(]|[:|,] ?[\u4e00-\u9fff]", ln)]
    assert main(["show", "zero-grad-set-to-none", "--lang", "zh"]) == 0
    zh = capsys.readouterr().out
    assert "收益：速度、显存/内存" in zh  # impacts joined with 、
    assert "\n- 《Pytorch技巧》（中文博客文章）\n" in zh  # a seed source, by its label
    assert main(["show", "tf32-matmul"]) == 0
    en = capsys.readouterr().out.splitlines()
    assert en[3] == "Category: Speed: compute | Impact: speed | Devices: CPU, CUDA GPU"


def test_error_lines_in_chinese_under_lang_zh(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every error line of show, list and search in the language of the run: one line, the same
    exit status, and in English the very words of the exception."""
    from generator.errors import InvalidRecords, Problem
    from generator.records import load as records

    def lines(argv: list[str], status: int) -> list[str]:
        assert main(argv) == status
        return capsys.readouterr().err.splitlines()

    assert lines(["show", "no-such-tip", "--lang", "zh"], 1) == [
        "错误：没有 id 为“no-such-tip”的技巧"
    ]
    (close,) = lines(["show", "zero-grad-set-to-nne", "--lang", "zh"], 1)
    assert close.startswith("错误：没有 id 为“zero-grad-set-to-nne”的技巧（你要找的是不是：")
    assert "zero-grad-set-to-none" in close and close.endswith("？）") and ", " not in close
    monkeypatch.setattr("generator.cli.search_documents", lambda lang: [])  # finds nothing
    assert lines(["search", "显存", "爆了"], 1) == ["错误：没有与“显存 爆了”匹配的结果"]  # auto: zh
    assert lines(["search", "oom"], 1) == ["error: nothing matches 'oom'"]
    with pytest.raises(records.NotFound) as raised:
        records.get_tip("zero-grad-set-to-nne")
    assert lines(["show", "zero-grad-set-to-nne"], 1) == [f"error: {raised.value}"]
    only = [records.get_tip("zero-grad-set-to-none")]
    monkeypatch.setattr(records, "load_tips", lambda: only)
    assert lines(["list", "--category", "memory", "--lang", "zh"], 1) == [
        "错误：没有符合这些筛选条件的技巧"
    ]
    assert main(["list", "--lang", "zh"]) == 0
    assert capsys.readouterr().out.endswith("\n共 1 条技巧。\n")

    def broken() -> list[object]:
        raise InvalidRecords([Problem("tips/x.yaml", 3, "title.zh", "must not be empty")])

    monkeypatch.setattr(records, "load_tips", broken)
    assert lines(["list", "--lang", "zh"], 1) == [
        "tips/x.yaml:3: title.zh: must not be empty",
        "技巧记录中有 1 个问题",
    ]
    assert lines(["list"], 1)[-1] == "1 problem(s) in the tip records"


def test_show_unknown_id_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "zero-grad-set-to-nne"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no tip with id") and "zero-grad-set-to-none" in err


def test_new_scaffolds_and_refuses_to_overwrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(paths, "TIPS", tmp_path)
    assert main(["new", "my-new-tip", "--category", "memory"]) == 0
    created = tmp_path / "my-new-tip.yaml"
    text = created.read_text(encoding="utf-8")
    assert "category: memory" in text and text.startswith("# yaml-language-server")
    capsys.readouterr()
    created.write_text(text + "\n# my edits\n", encoding="utf-8")
    assert main(["new", "my-new-tip"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert created.read_text(encoding="utf-8").endswith("# my edits\n")  # nothing lost
    assert main(["new", "Bad_Id"]) == 2


def test_a_fresh_scaffold_is_flagged_until_filled_in(tmp_path: Path) -> None:
    from generator.records.load import validate
    from generator.records.scaffold import new_tip

    path = new_tip("half-written", tips_dir=tmp_path)
    _, problems = validate([path])
    assert any("TODO" in p.reason for p in problems)


@pytest.mark.parametrize(
    "argv",
    [
        ["validate"],
        ["list"],
        ["search", "memory"],
        ["show", "zero-grad-set-to-none"],
        ["compose", "--amp", "--accum", "4", "--ddp"],
        ["lint", str(paths.ROOT / "snippets" / "zero-grad-set-to-none" / "after.py")],
    ],
    ids=lambda a: a[0],
)
def test_light_commands_do_not_import_torch(argv: list[str]) -> None:
    """The base install's commands import none of the extras' packages (tests/test_packaging.py
    runs them where those are not installed at all)."""
    code = (
        "import sys, contextlib, io\n"
        "from generator.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main({argv!r})\n"
        "assert rc in (0, 1), rc\n"
        "heavy = [m for m in ('torch', 'numpy', 'mkdocs', 'tqdm') if m in sys.modules]\n"
        "assert not heavy, f'imported {heavy}'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_a_missing_extra_is_named_in_one_line_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name.split(".")[0] == "mkdocs" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    wrote = []
    monkeypatch.setattr("generator.site.pages.write_pages", lambda *a, **k: wrote.append(a))
    assert main(["build"]) == 2
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        "error: pytorch-tips build needs the [site] extra (mkdocs is not installed): "
        "pip install -e '.[site]'"
    ]
    assert out == "" and wrote == []


def test_an_extra_module_missing_at_run_time_is_one_line_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The net under the check above: a command that imports a package of an extra without
    declaring it still ends in one line naming the extra, and any other missing module is a
    bug that keeps its traceback."""
    from generator.command import Command
    from generator.records import cli as records_cli

    def needs(module: str) -> Command:
        def handler(args: object) -> int:
            raise ModuleNotFoundError(f"No module named {module!r}", name=module)

        return records_cli.COMMANDS["show"]._replace(handler=handler)

    monkeypatch.setitem(records_cli.COMMANDS, "show", needs("torch.utils.benchmark"))
    assert main(["show", "zero-grad-set-to-none"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: pytorch-tips show needs the [run] extra (torch.utils.benchmark")
    monkeypatch.setitem(records_cli.COMMANDS, "show", needs("no_such_module"))
    with pytest.raises(ModuleNotFoundError):
        main(["show", "zero-grad-set-to-none"])


def test_run_executes_a_tip_like_the_suite_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "zero-grad-set-to-none", "--variant", "after"]) == 0
    assert "ok: zero-grad-set-to-none after on cpu" in capsys.readouterr().out
