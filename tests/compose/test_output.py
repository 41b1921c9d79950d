"""Where ``compose`` writes: every refusal is one line and exit status 2, before anything
is written; a symlink is written through (its target replaced, the link kept); FIFOs,
devices, folders and symlink loops are refused; standard output that fails (a full disk,
closed) is one line too; argparse's own errors are one line with a --help hint; and the
counts have upper bounds."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from generator import cli


def _refused(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compose", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and err.count("\n") == 1, err


def test_paths_that_cannot_be_written_are_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "afile").write_text("")
    (tmp_path / "adir").mkdir()
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "loop_a").symlink_to(tmp_path / "loop_b")
    (tmp_path / "loop_b").symlink_to(tmp_path / "loop_a")
    before = sorted(p.name for p in tmp_path.iterdir())
    cases = [
        ("", "-o needs a file name"),
        (" ", "-o needs a file name"),
        (tmp_path / "afile" / "train.py", "Not a directory"),
        (tmp_path / "afile" / "sub" / "train.py", "Not a directory"),
        (tmp_path / ("x" * 300 + ".py"), "File name too long"),
        (tmp_path / "adir", "is a folder"),
        (tmp_path / "fifo.py", "is not a regular file"),
        (tmp_path / "loop_a", "Too many levels of symbolic links"),
        ("/dev/null", "is not a regular file"),
    ]
    for path, says in cases:
        for force in ([], ["--force"]):
            _refused(["-o", str(path), *force], says, capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


def test_a_symlink_is_written_through(tmp_path, capsys):
    """--force on a symlink replaces its target and keeps the link; a dangling one needs
    --force, then creates its target; a replaced file keeps its permissions."""
    target, link = tmp_path / "real.py", tmp_path / "link.py"
    target.write_text("old")
    target.chmod(0o750)
    link.symlink_to(target.name)
    _refused(["-o", str(link)], "exists: use --force", capsys)
    assert cli.main(["compose", "-o", str(link), "--force"]) == 0
    assert capsys.readouterr().err == f"wrote {link}\n"
    assert link.is_symlink() and target.read_text().startswith('"""Train a small conv net')
    assert (target.stat().st_mode & 0o777) == 0o750
    dangling = tmp_path / "dangling.py"
    dangling.symlink_to("made.py")
    _refused(["-o", str(dangling)], "symlink to a missing file", capsys)
    assert cli.main(["compose", "-o", str(dangling), "--force"]) == 0
    assert dangling.is_symlink() and (tmp_path / "made.py").read_text().startswith('"""')
    assert not list(tmp_path.glob(".*.tmp"))


def test_standard_output_errors_are_one_line(tmp_path):
    """`-o -` is standard output; a full disk and a closed standard output are refused in
    one line each, exit status 2 (in a subprocess: the file descriptors are real)."""

    def compose(*redirect: str) -> subprocess.CompletedProcess[str]:
        code = "import sys; from generator.cli import main; sys.exit(main(['compose', '-o', '-']))"
        shell = f'{sys.executable} -c "{code}" {" ".join(redirect)}'
        return subprocess.run(shell, shell=True, capture_output=True, text=True, timeout=60)

    ok = compose()
    assert ok.returncode == 0 and ok.stdout.startswith('"""Train a small conv net')
    for redirect, says in (("> /dev/full", "No space left on device"), (">&-", "closed")):
        run = compose(redirect)
        assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
        assert run.stderr.startswith("error: ") and says in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--accum", "x"], "argument --accum: invalid int value: 'x'"),
        (["--model", "bert"], "argument --model: invalid choice: 'bert'"),
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--accum", "1025"], "--accum must be in [1, 1024], got 1025"),
        (["--workers", "257"], "--workers must be in [0, 256], got 257"),
        (["--eval-every", str(10**9 + 1)], "--eval-every must be in [1, 1000000000]"),
    ],
    ids=["not-an-int", "not-a-choice", "unknown-flag", "accum", "workers", "eval-every"],
)
def test_argument_errors_are_one_line_with_a_help_hint(argv, says, tmp_path, capsys):
    out = tmp_path / "train.py"
    try:
        code = cli.main(["compose", *argv, "-o", str(out)])
    except SystemExit as stop:  # argparse's errors end the parse
        code = stop.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and err.count("\n") == 1, err
    if "invalid" in says or "unrecognized" in says:
        assert err.rstrip().endswith("--help)")
    assert not out.exists()
