"""Scripts that raise, end early, never step, parse their arguments, run under torchrun,
and input that is not a script: each gets its documented outcome, never the doctor's
traceback.

torchrun and a script that is not valid Python run in new processes, as a user runs them
(PYTHONUNBUFFERED unset): their exit status, standard output and standard error are the
processes'. The others run in this process (`in_process`: the same command line, main's
return value as the exit status, an exception out of it fails the test), sharing one import
of torch and TorchDynamo: a new process pays 2 to 3.5 s of CPU for them before it measures."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doctor.runs import FAST, SCRIPTS, doctor, env, in_process, no_traceback, planted

#: The tests in this process share one worker under xdist (and one import of torch).
shared = pytest.mark.xdist_group("doctor")


@shared
def test_a_script_that_raises_gets_its_error_in_one_line_and_exit_1() -> None:
    run = in_process(*FAST, "--format", "json", "--no-lint", "raises.py")
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


@shared
def test_an_error_raised_inside_torch_names_the_users_line() -> None:
    """A shape error raised inside torch, before any step: the script's error in one line
    at the user's line (not torch's), exit 1, no report, nothing else on standard error."""
    run = in_process(*FAST, "--format", "json", "shape_error.py")
    assert run.returncode == 1 and run.stdout == ""
    no_traceback(run)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("the script raised RuntimeError: ")
    assert lines[0].endswith(f"(shape_error.py:{planted('shape_error.py', 'raises')})")


@shared
def test_a_script_that_exits_early_is_reported_on_the_steps_it_ran(tmp_path: Path) -> None:
    """With the report in Chinese, to a file: JSON, as its name says (no --format)."""
    out = tmp_path / "report.json"
    run = in_process(*FAST, "--lang", "zh", "-o", str(out), "exits_early.py")
    assert run.returncode == 0, run.stderr
    no_traceback(run)
    assert run.stdout == ""  # the report went to the file
    assert "doctor：已计时第 3/3 步" in run.stderr and f"已写入 {out}" in run.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["outcome"] == "exited"
    assert report["total_steps"] == 5 and report["steps"] == 3
    assert report["profiled_steps"] == []


@shared
def test_a_script_that_never_steps_says_so_in_one_line() -> None:
    """The script's own output, then one line, exit 1, no report."""
    run = in_process(*FAST, "never_steps.py")
    assert run.returncode == 1 and run.stdout == ""
    no_traceback(run)
    printed, said = run.stderr.strip().splitlines()
    assert printed == "evaluated"  # the script's print, on standard error while it runs
    assert said.startswith("never_steps.py ran for ")
    assert said.endswith(
        " and ended without an optimizer step: the doctor measures the time "
        "between optimizer.step() calls"
    )


@shared
def test_main_guard_and_argparse_get_argv_and_file() -> None:
    argv, path = list(sys.argv), list(sys.path)
    run = in_process(*FAST, "--format", "json", "--no-lint", "with_main.py", "--lr", "0.5")
    assert run.returncode == 0, run.stderr
    assert run.report["args"] == ["--lr", "0.5"] and run.report["steps"] == 3
    assert "finished" not in run.stderr  # stopped by the doctor, after its steps
    assert (sys.argv, sys.path) == (argv, path)  # as they were before the script ran
    bad = in_process(*FAST, "with_main.py")  # --lr missing: argparse's own message, status 2
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
    # Rank 0's progress and nothing else: no line from the profiler's native code (a CPU
    # block allocated before it started and freed under it logs one, unless the doctor
    # frees such a block where its descriptor 2 goes nowhere).
    lines = proc.stderr.strip().splitlines()
    assert lines and all(line.startswith("doctor: ") for line in lines), proc.stderr
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


INTERRUPTED = """
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
    optimizer.zero_grad()
    if step == 5:  # the first profiled step (1 warm-up, 3 timed, 1 as the profiler starts)
        raise KeyboardInterrupt  # what Ctrl-C (SIGINT) raises in the script
"""


@shared
def test_ctrl_c_while_profiling_stops_the_profiler_and_writes_nothing(tmp_path: Path) -> None:
    """One line, exit 130, no report file; the profiler is stopped (one left running
    crashed the interpreter as it exited)."""
    import torch

    (tmp_path / "train.py").write_text(INTERRUPTED, encoding="utf-8")
    run = in_process(*FAST, "-o", "report.html", "train.py", cwd=tmp_path)
    assert run.returncode == 130, run.stderr
    no_traceback(run)
    lines = run.stderr.strip().splitlines()
    assert "doctor: profiled step 1/3" in lines and lines[-1] == "interrupted: no report"
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]
    assert not torch._C._autograd._profiler_enabled()  # a new profiler would not tell


@shared
def test_a_report_or_trace_that_cannot_be_written_is_refused_before_the_run(
    tmp_path: Path,
) -> None:
    """One line, exit 2, before the script runs (not after it, losing the run); nothing is
    made or left half-written."""
    shutil.copy(SCRIPTS / "exits_early.py", tmp_path / "train.py")
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    cases = {
        ("-o", "missing/report.html"): "error: missing: no such folder",
        ("-o", "a-file/report.html"): "error: a-file: not a folder",
        ("-o", " "): "error: -o: give the report's file name",
        ("--trace", "a-file"): "error: a-file is a file: --trace takes a folder",
        ("--trace", "a-file/traces"): "error: a-file/traces: cannot make the trace's folder",
        ("--trace", "traces", "--profile-steps", "0"): "error: --trace needs the profiler",
    }
    if Path("/proc/self").is_dir():  # a folder that takes no new file, even from root
        cases["-o", "/proc/report.html"] = "error: /proc/report.html: cannot write the report"
    for options, message in cases.items():
        run = in_process(*options, "train.py", cwd=tmp_path)
        assert run.returncode == 2 and run.stdout == "", (options, run.stderr)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(message), (options, lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "train.py"]


@shared
def test_input_that_is_not_a_script_is_refused_in_one_line(tmp_path: Path) -> None:
    """Exit 2, one line, no report file; the first case in a new process."""
    (tmp_path / "notes.bin").write_bytes(b"\x00\x01binary")
    (tmp_path / "broken.py").write_text("import torch\nfor x in:\n    pass\n", "utf-8")
    shutil.copy(SCRIPTS / "never_steps.py", tmp_path / "ok.py")
    out = tmp_path / "report.json"
    cases = {
        "broken.py": "broken.py:2:9: not a valid Python script: invalid syntax",
        "missing.py": "missing.py: no such file",
        "notes.bin": "notes.bin: not a Python script",
        ".": "is a folder",
    }
    for i, (script, message) in enumerate(cases.items()):
        run = (doctor if i == 0 else in_process)("-o", str(out), script, cwd=tmp_path)
        assert run.returncode == 2, (script, run.stderr)
        assert run.stdout == "" and not out.exists()
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (script, lines)
    bad_output = in_process("-o", str(tmp_path), "ok.py", cwd=tmp_path)
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
