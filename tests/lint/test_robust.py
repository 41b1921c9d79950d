"""Hostile input against the lint (issue 24, item 7): each traceback site and each fix that
changed or broke code in the reliability review of 2026-11-28 (L-1..L-7, F-1..F-5), as the
user met it, through ``python -m generator lint`` (in this process, where that is the same).

Every case asserts what the user gets: the findings, the fixed bytes, one line and an exit
status, never a traceback."""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator import cli
from generator.lint import api
from generator.lint.edits import sound
from generator.lint.engine import Finding
from generator.lint.lines import Lines
from generator.lint.rules import RULES
from generator.lint.rules.base import Edit


def lint(capsys: pytest.CaptureFixture[str], *args: str, lang: str = "en") -> tuple[int, str, str]:
    """``python -m generator lint ARGS`` in this process: exit status, stdout, stderr."""
    code = cli.main(["lint", *args, "--lang", lang])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def write(folder: Path, name: str, data: bytes | str) -> Path:
    path = folder / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def compiles(data: bytes) -> bool:
    try:
        compile(data, "f", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


# --- L-1: one line model: CR-only and mixed line ends ---------------------------------------


@pytest.mark.parametrize(
    ("source", "line", "rule", "fixed"),
    [
        # the three traceback sites: Context.segment, open_paren, the fix's offsets
        (
            b"import torch\rx = torch.zeros(3).to(device)\r",
            2,
            "PTT015",
            b"import torch\rx = torch.zeros(3, device=device)\r",
        ),
        (
            b"import torch\rs = torch.cuda.amp.GradScaler()\r",
            2,
            "PTT002",
            b'import torch\rs = torch.amp.GradScaler("cuda")\r',
        ),
        (
            b"import torch\rm = torch.cuda.memory_cached()\r",
            2,
            "PTT005",
            b"import torch\rm = torch.cuda.memory_reserved()\r",
        ),
        (
            b"import torch\r\nx = 1\ry = 2\nm = torch.cuda.memory_cached()\r\nz = 3\r",
            4,
            "PTT005",
            b"import torch\r\nx = 1\ry = 2\nm = torch.cuda.memory_reserved()\r\nz = 3\r",
        ),
    ],
    ids=["cr-segment", "cr-paren", "cr-offset", "mixed"],
)
def test_cr_and_mixed_line_ends_are_checked_and_fixed_byte_for_byte(
    source: bytes,
    line: int,
    rule: str,
    fixed: bytes,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write(tmp_path, "t.py", source)
    code, out, _ = lint(capsys, str(path))
    assert code == 1 and f"t.py:{line}:5: {rule}" in out and "1 fixable" in out
    code, diff, _ = lint(capsys, str(path), "--diff")
    added = [ln for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert code == 1 and len(added) == 1 and "No newline" not in diff
    assert path.read_bytes() == source  # --diff writes nothing
    code, out, _ = lint(capsys, str(path), "--fix")
    assert code == 0 and "Fixed 1 finding" in out
    assert path.read_bytes() == fixed


def test_noqa_counts_lines_as_ast_does() -> None:
    source = 'import torch\rx = """a\r\nb"""\rm = torch.cuda.memory_cached()  # noqa: PTT005\r'
    assert api.run_source(source, "t.py", isolated=True).result.findings == []
    without = source.replace("  # noqa: PTT005", "")
    [found] = api.run_source(without, "t.py", isolated=True).result.findings
    assert (found.line, found.rule) == (4, "PTT005")


def test_the_checked_file_s_warnings_are_not_the_lint_s(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import warnings

    source = 'import torch\nx = True[0]\ny = "\\d"\nstate = torch.load(p)\n'
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # python -W error, PYTHONWARNINGS=error
        run = api.run_source(source, "w.py", isolated=True)
    assert not run.result.errors and [f.rule for f in run.result.findings] == ["PTT011"]
    assert capsys.readouterr().err == ""


# --- L-2, L-3: encodings CPython refuses ---------------------------------------------------


@pytest.mark.parametrize("codec", ["rot13", "base64", "hex", "zlib", "undefined", "punycode"])
def test_a_coding_cookie_that_is_no_text_encoding_is_one_line(
    codec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "c.py", f"# coding: {codec}\nimport torch\n")
    for mode in ([], ["--fix"], ["--format", "sarif"]):
        code, _, err = lint(capsys, str(path), *mode)
        assert code == 1 and err.count("\n") == 1 and err.startswith(f"{path}:1:1: cannot decode")


def test_a_bom_with_a_latin1_cookie_is_refused_as_python_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = b"\xef\xbb\xbf# coding: latin-1\nimport torch\nm = torch.cuda.memory_cached()\n"
    path = write(tmp_path, "b.py", data)
    assert not compiles(data)
    code, out, err = lint(capsys, str(path), "--fix")
    assert code == 1 and "byte-order mark" in err and "Fixed" not in out
    assert path.read_bytes() == data


# --- L-4: a deep for target -----------------------------------------------------------------


def test_a_deep_for_target_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "import torch\nfor x" + ".b" * 400 + " in loader:\n    pass\n"
    code, out, _ = lint(capsys, str(write(tmp_path, "d.py", text)), "--select", "ALL")
    assert code == 0 and "No findings in 1 file" in out


# --- L-5: what a folder holds: symlink loops, FIFOs; an empty path -------------------------


def test_a_symlink_loop_in_a_folder_is_skipped_with_a_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.py").symlink_to("b.py")
    (tmp_path / "b.py").symlink_to("a.py")
    write(tmp_path, "good.py", "import torch\nstate = torch.load(p)\n")
    code, out, err = lint(capsys, str(tmp_path))
    assert code == 1 and "good.py:2:9: PTT011" in out
    assert sorted(line.split(":")[0].rsplit("/", 1)[-1] for line in err.splitlines()) == [
        "a.py",
        "b.py",
    ]
    assert all("skipped" in line for line in err.splitlines())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_without_reading_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "f.py"
    os.mkfifo(fifo)  # nobody writes it: reading would wait for ever
    code, _, err = lint(capsys, str(fifo))
    assert (
        code == 1
        and err == f"{fifo}:1:1: not a regular file (a FIFO, a device or a socket): not read\n"
    )
    config = tmp_path / "conf.toml"
    os.mkfifo(config)
    code, _, err = lint(capsys, str(tmp_path / "missing.py"), "--config", str(config))
    assert code == 2 and err.startswith(f"error: {config}:1:1: cannot read the configuration")


def test_an_empty_path_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = lint(capsys, "")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "empty path" in err


# --- L-6, and names in every format ----------------------------------------------------------


@pytest.mark.skipif(sys.platform != "linux", reason="a file name with a non-UTF-8 byte")
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "gitlab"])
def test_a_file_name_with_a_newline_and_a_non_utf8_byte_is_safe(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = os.fsdecode(b"bad\xff\nx.py")
    write(tmp_path, name, "import torch\nm = torch.cuda.memory_cached()\n")
    code, out, _ = lint(capsys, str(tmp_path), "--format", fmt)
    assert code == 1 and "\ud8ff" not in out and "\udcff" not in out
    if fmt == "text":
        assert out.splitlines()[0].endswith("(tip: measure-gpu-memory)")  # one line
        assert "bad\\xff\\nx.py:2:5: PTT005" in out
    elif fmt == "sarif":
        assert "bad%FF%0Ax.py" in out
    elif fmt == "github":
        assert out.count("\n") == 1 and "bad\\xff\\nx.py" in out
    else:  # JSON readers get the name back
        import json

        data = json.loads(out)
        paths = (
            [d["path"] for d in data] if fmt == "json" else [d["location"]["path"] for d in data]
        )
        assert os.fsencode(paths[0]).endswith(b"bad\xff\nx.py")


# --- L-7: output that cannot be written -----------------------------------------------------


def test_output_errors_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "g.py", "import torch\nstate = torch.load(p)\n")
    written = io.BytesIO()
    ascii_out = io.TextIOWrapper(written, encoding="ascii")
    monkeypatch.setattr(sys, "stdout", ascii_out)
    code = cli.main(["lint", str(path), "--lang", "zh"])
    err = capsys.readouterr().err
    assert code == 2 and "PYTHONIOENCODING=utf-8" in err and err.count("\n") == 1
    ascii_out.flush()
    assert written.getvalue() == b""  # nothing half-written
    monkeypatch.setattr(sys, "stdout", None)
    assert cli.main(["lint", str(path)]) == 2
    assert capsys.readouterr().err == "error: cannot write the output: standard output is closed\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_full_disk_and_a_closed_stdout_end_in_one_line_as_processes(tmp_path: Path) -> None:
    path = write(tmp_path, "g.py", "import torch\nstate = torch.load(p)\n")
    command = [sys.executable, "-m", "generator", "lint", str(path)]
    with open("/dev/full", "w") as full:
        proc = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (
        2,
        "error: cannot write the output: No space left on device\n",
    )
    proc = subprocess.run(
        command, stderr=subprocess.PIPE, text=True, timeout=60, preexec_fn=lambda: os.close(1)
    )
    assert (proc.returncode, proc.stderr) == (
        2,
        "error: cannot write the output: standard output is closed\n",
    )


# --- F-1..F-3: fixes placed on the source's tokens ------------------------------------------


@pytest.mark.parametrize(
    ("written", "fixed"),
    [
        ("torch.cuda.memory_cacheｄ()", "torch.cuda.memory_reserved()"),
        ("torch.cuda.reset_max_memory_allocateｄ()", "torch.cuda.reset_peak_memory_stats()"),
        ("torch.nn.utils.clip_grad_norｍ(p, 1.0)", "torch.nn.utils.clip_grad_norm_(p, 1.0)"),
        ("torch.nn.init.xavier_normaｌ(w)", "torch.nn.init.xavier_normal_(w)"),
    ],
    ids=["PTT005", "PTT004", "PTT008", "PTT009"],
)
def test_a_rename_replaces_the_name_as_written_nfkc(written: str, fixed: str) -> None:
    run = api.run_source(f"import torch\nm = {written}\n", "u.py", fix=True, isolated=True)
    assert run.fixed == 1 and run.text == f"import torch\nm = {fixed}\n"


def test_a_parenthesis_in_a_comment_is_not_the_call_s() -> None:
    source = "import torch\nx = [torch.zeros  # (see docs)\n     ().cuda()]\n"
    run = api.run_source(source, "p.py", fix=True, isolated=True)
    assert run.text == 'import torch\nx = [torch.zeros  # (see docs)\n     (device="cuda")]\n'


def test_a_keyword_already_given_is_never_written_twice() -> None:
    """The deprecated decorator refuses ``device_type=`` (a TypeError when the module is
    imported), so the program fails before and would run after: a safe fix may not make
    that change. The finding is reported, with no fix, and ``device_type=`` is never written
    a second time (that would not compile)."""
    source = (
        'import torch\n@torch.cuda.amp.custom_fwd(device_type="cuda")\n'
        "def f(ctx, x):\n    return x\n"
    )
    run = api.run_source(source, "a.py", fix=True, isolated=True)
    assert run.text == source and compiles(run.text.encode())
    assert [f.rule for f in run.result.findings] == ["PTT003"]


# --- F-4: links -------------------------------------------------------------------------------


def test_fix_writes_through_a_symlink_and_keeps_hard_links(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = write(tmp_path, "target.py", "import torch\nm = torch.cuda.memory_cached()\n")
    real.chmod(0o640)
    link, hard = tmp_path / "link.py", tmp_path / "hard.py"
    link.symlink_to(real.name)
    os.link(real, hard)
    code, _, _ = lint(capsys, str(link), "--fix")
    assert code == 0 and link.is_symlink() and os.readlink(link) == real.name
    assert (
        hard.read_text() == real.read_text() == "import torch\nm = torch.cuda.memory_reserved()\n"
    )
    assert os.stat(hard).st_ino == os.stat(real).st_ino and (real.stat().st_mode & 0o777) == 0o640


# --- F-5: every fix shown as fixable is applied, alone if need be ---------------------------


def test_fixes_that_no_longer_compile_are_not_claimed_and_do_not_block_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (
        "import torch\r"  # a lone CR earlier in the file
        "x = (torch.zeros(3)).cuda()\n"
        "y = torch.tensor(i for i in r).cuda()\n"
        "z = torch.load(p for p in ps)\n"
        'w = f"{torch.zeros(3).cuda()=}"\n'
        "m = torch.cuda.memory_cached()\n"
    )
    path = write(tmp_path, "f5.py", source)
    code, out, _ = lint(capsys, str(path), "--fix", "--unsafe-fixes")
    assert code == 1 and "Fixed 4 findings" in out and "fixable" not in out
    assert path.read_bytes().decode() == (
        "import torch\r"
        'x = (torch.zeros(3, device="cuda"))\n'
        'y = torch.tensor((i for i in r), device="cuda")\n'
        "z = torch.load((p for p in ps), weights_only=True)\n"
        'w = f"{torch.zeros(3).cuda()=}"\n'  # the text of f"{x=}" is output: left alone
        "m = torch.cuda.memory_reserved()\n"
    )
    assert "f5.py:5:8: PTT015" in out
    code, out, _ = lint(capsys, str(path), "--fix", "--unsafe-fixes")  # nothing more to do
    assert "Fixed" not in out and "fixable" not in out


def _finding(line: int, edits: tuple[Edit, ...]) -> Finding:
    return Finding("t.py", line, 1, "PTT000", "m", "tip", "error", True, edits=edits, fix="safe")


def test_a_fix_that_breaks_the_code_is_dropped_alone() -> None:
    source = "a = f(1)\nb = g(2)\nc = h(3)\n"
    good = _finding(1, (Edit((1, 4), (1, 5), "ff"),))
    bad = _finding(2, (Edit((2, 6), (2, 7), "2, x=1, x=2"),))  # a repeated keyword
    also_good = _finding(3, (Edit((3, 4), (3, 5), "hh"),))
    nowhere = _finding(3, (Edit((0, 0), (0, 0), "x"),))
    kept = sound(source, Lines(source), [good, bad, also_good, nowhere])
    assert [bool(f.edits) for f in kept] == [True, False, True, False]
    assert [f.fixable for f in kept] == [True, False, True, False]


# --- the per-file guard: a rule that raises -------------------------------------------------


def test_a_rule_that_raises_is_one_internal_error_line_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = next(r for r in RULES if r.code == "PTT018")

    def crash(self: object, ctx: object) -> object:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(broken, "check", crash)
    path = write(tmp_path, "t.py", "import torch\nstate = torch.load(p)\n")
    other = write(tmp_path, "u.py", "import torch\nm = torch.cuda.memory_cached()\n")
    code, out, err = lint(capsys, str(tmp_path), "--fix")
    assert code == 3
    assert err == (
        "t.py:1:1: internal error in PTT018: RecursionError: maximum recursion depth exceeded"
        " (a bug of the lint, not of your file: please report it)\n"
        "u.py:1:1: internal error in PTT018: RecursionError: maximum recursion depth exceeded"
        " (a bug of the lint, not of your file: please report it)\n"
    ).replace("t.py", str(path)).replace("u.py", str(other))
    assert "t.py:2:9: PTT011" in out  # the other rules still report
    assert "memory_cached" in other.read_text()  # a file the lint failed on is not fixed
    zh = cli.main(["lint", str(path), "--lang", "zh"])
    assert zh == 3 and "PTT018 内部错误：RecursionError" in capsys.readouterr().err


def test_a_tree_the_analysis_cannot_read_is_an_internal_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from generator.lint import engine

    def fail(*args: object, **kwargs: object) -> object:
        raise ValueError("boom")

    monkeypatch.setattr(engine, "Context", fail)
    run = api.run_source("x = 1\n", "t.py", isolated=True)
    assert run.exit_code == 3 and run.result.errors[0].message.startswith(
        "internal error in lint: ValueError: boom"
    )
    assert ast.parse("x = 1\n")  # the file itself is fine


def test_a_file_that_cannot_be_written_is_one_line_and_the_others_are_fixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator.lint import fix

    locked = write(tmp_path, "a.py", "import torch\nm = torch.cuda.memory_cached()\n")
    other = write(tmp_path, "b.py", "import torch\nm = torch.cuda.memory_cached()\n")
    real = fix.write_atomic

    def refuse(path: Path, text: str) -> None:
        if path.name == "a.py":
            raise PermissionError(13, "Permission denied")
        real(path, text)

    monkeypatch.setattr(api, "write_atomic", refuse)
    code, out, err = lint(capsys, str(tmp_path), "--fix")
    assert code == 1 and err == f"{locked}:1:1: cannot write the file: Permission denied\n"
    assert "memory_cached" in locked.read_text() and "memory_reserved" in other.read_text()
    assert "Fixed 1 finding" in out
