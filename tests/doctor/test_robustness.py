"""Scripts that raise, end early, never step, parse their arguments, run under torchrun,
and input that is not a script: each gets its documented outcome, never the doctor's
traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doctor.runs import FAST, SCRIPTS, doctor, env, no_traceback, planted, report_of


def test_a_script_that_raises_gets_its_error_in_one_line_and_exit_1() -> None:
    run = report_of("raises.py", "--no-lint")
    assert run.returncode == 1
    no_traceback(run)
    line = planted("raises.py", "raises")
    expected = f"the script raised ValueError: the data ran out of bananas (raises.py:{line})"
    assert run.stderr.strip().splitlines()[-1] == expected
    report = run.report  # the steps before the error are reported
    assert report["outcome"] == "raised" and report["steps"] == 2
    assert report["error"] == {
        "type": "ValueError",
        "message": "the data ran out of bananas",
        "path": "raises.py",
        "line": line,
    }


def test_a_script_that_exits_early_is_reported_on_the_steps_it_ran(tmp_path: Path) -> None:
    """With the report in Chinese, to a file."""
    out = tmp_path / "report.json"
    run = doctor(*FAST, "--format", "json", "--lang", "zh", "-o", str(out), "exits_early.py")
    assert run.returncode == 0, run.stderr
    no_traceback(run)
    assert run.stdout == ""  # the report went to the file
    assert "doctor：已计时第 3/3 步" in run.stderr and f"已写入 {out}" in run.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["outcome"] == "exited"
    assert report["total_steps"] == 5 and report["steps"] == 3
    assert report["profiled_steps"] == []


def test_a_script_that_never_steps_says_so_in_one_line() -> None:
    run = doctor(*FAST, "never_steps.py")
    assert run.returncode == 1 and run.stdout == ""
    no_traceback(run)
    assert "never_steps.py ran for" in run.stderr
    assert "without an optimizer step" in run.stderr.strip().splitlines()[-1]


def test_main_guard_and_argparse_get_argv_and_file() -> None:
    run = doctor(*FAST, "--format", "json", "--no-lint", "with_main.py", "--lr", "0.5")
    assert run.returncode == 0, run.stderr
    assert run.report["args"] == ["--lr", "0.5"] and run.report["steps"] == 3
    assert "finished" not in run.stderr  # stopped by the doctor, after its steps
    bad = doctor(*FAST, "with_main.py")  # --lr missing: argparse's own message, status 2
    assert bad.returncode == 1 and bad.stdout == ""
    no_traceback(bad)
    assert "the following arguments are required: --lr" in bad.stderr
    assert "exited with status 2" in bad.stderr.strip().splitlines()[-1]


def test_torchrun_each_rank_measures_rank_0_reports_the_spread(tmp_path: Path) -> None:
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    args = [*FAST, "--format", "json", "--no-lint", "--trace", str(tmp_path), "ddp.py"]
    proc = subprocess.run(
        [*torchrun, "--nproc_per_node", "2", "-m", "generator", "doctor", *args],
        cwd=SCRIPTS,
        capture_output=True,
        text=True,
        env=env(),
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads(proc.stdout)  # one report: rank 0's
    assert report["world_size"] == 2 and [r["rank"] for r in report["ranks"]] == [0, 1]
    waits = {r["rank"]: r["breakdown"]["data"] for r in report["ranks"]}
    assert waits[1] > waits[0]  # rank 1's dataset sleeps 3 ms a sample
    # Rank 0 waits in the all-reduce for rank 1, and the finding says why.
    comm = next(f for f in report["findings"] if f["kind"] == "comm_overlap")
    assert comm["tip"] == "ddp-tuning-knobs" and "slowest: rank 1" in comm["evidence"]
    traces = sorted(p.name for p in tmp_path.iterdir())
    assert traces == ["doctor-trace-rank0.json", "doctor-trace-rank1.json"]
    assert "traceEvents" in json.loads((tmp_path / traces[0]).read_text(encoding="utf-8"))


def test_input_that_is_not_a_script_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.bin").write_bytes(b"\x00\x01binary")
    (tmp_path / "broken.py").write_text("import torch\nfor x in:\n    pass\n", "utf-8")
    shutil.copy(SCRIPTS / "never_steps.py", tmp_path / "ok.py")
    out = tmp_path / "report.json"
    cases = {
        "missing.py": "missing.py: no such file",
        "notes.bin": "notes.bin: not a Python script",
        "broken.py": "broken.py:2:9: not a valid Python script: invalid syntax",
        ".": "is a folder",
    }
    for script, message in cases.items():
        run = doctor("-o", str(out), script, cwd=tmp_path)
        assert run.returncode == 2, (script, run.stderr)
        assert run.stdout == "" and not out.exists()
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (script, lines)
    bad_output = doctor("-o", str(tmp_path), "ok.py", cwd=tmp_path)
    assert bad_output.returncode == 2 and "is a folder" in bad_output.stderr


def test_without_torch_one_line_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    from generator.cli import main

    real = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name.split(".")[0] == "torch" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert main(["doctor", str(SCRIPTS / "raises.py")]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "error: pytorch-tips doctor needs the [run] extra (torch is not installed): "
        "pip install -e '.[run]'"
    ]
