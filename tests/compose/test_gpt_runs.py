"""compose --model gpt never loses a run: a rerun resumes the checkpoint in OUT (--fresh
moves the old run aside; --keep prunes, nothing else deletes), metrics follow the
checkpoint, an asynchronous save is published as soon as it is complete (a kill -9 after
it resumes from it), a non-finite step is skipped and changes nothing, SIGINT saves like
SIGTERM, stdout is line-buffered without PYTHONUNBUFFERED, and a kill -9 never leaves a
torn checkpoint. One process each (a world of one under --fsdp)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.compose.compose_cases import ENV
from tests.compose.gpt_cases import SIZES, checkpoint, losses, metrics, write_gpt

SMALL = [*SIZES, "--batch-size", "2", "--log-every", "1", "--eval-every", "0"]


def _text(log: Path) -> str:
    try:
        return log.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def _wait_for(condition, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, _text(log)
        time.sleep(0.01)


def test_a_rerun_resumes_and_fresh_moves_the_run_aside(tmp_path, runner):
    """A rerun without --resume resumes (and says so); the metrics a crashed run logged
    past its checkpoint are dropped, so each step appears once; --fresh moves the old run
    to OUT.1 and starts at step 0; --keep 2 keeps the newest two; --resume with nothing to
    resume says so in one line and starts at step 0."""
    script = write_gpt(tmp_path, ["--model", "gpt"])
    out = tmp_path / "out"
    run = runner.run(script, [*SMALL, "--max-steps", "4", "--ckpt-every", "2"])
    assert run.rc == 0, run.output
    with (out / "metrics.jsonl").open("a") as f:  # what a crash after step 6 leaves
        f.writelines(json.dumps({"step": s, "loss": 9.0}) + "\n" for s in (5, 6))
    run = runner.run(script, [*SMALL, "--max-steps", "6", "--ckpt-every", "2"])
    assert run.rc == 0, run.output
    assert "resumed from out/step-4.pt at step 4 (--fresh starts over)" in run.output
    assert [r["step"] for r in metrics(out)] == [1, 2, 3, 4, 5, 6]
    assert losses(out)[5] != 9.0
    assert sorted(p.name for p in out.glob("step-*")) == ["step-2.pt", "step-4.pt", "step-6.pt"]
    assert not list(out.glob("*.tmp"))

    run = runner.run(script, [*SMALL, "--max-steps", "3", "--ckpt-every", "1", "--fresh"])
    assert run.rc == 0, run.output
    assert "--fresh: moved the previous run in out to out.1" in run.output
    aside = tmp_path / "out.1"
    assert len(list(aside.glob("step-*"))) == 3
    assert [r["step"] for r in metrics(aside)] == [1, 2, 3, 4, 5, 6]
    assert [r["step"] for r in metrics(out)] == [1, 2, 3]
    assert sorted(p.name for p in out.glob("step-*")) == ["step-1.pt", "step-2.pt", "step-3.pt"]
    run = runner.run(script, [*SMALL, "--max-steps", "5", "--ckpt-every", "1", "--keep", "2"])
    assert run.rc == 0, run.output
    assert sorted(p.name for p in out.glob("step-*")) == ["step-4.pt", "step-5.pt"]

    run = runner.run(script, [*SMALL, "--max-steps", "1", "--out", "new", "--resume"])
    assert run.rc == 0, run.output
    assert "--resume: no checkpoint in new; starting at step 0" in run.output
    assert checkpoint(tmp_path / "new")["step"] == 1


def test_kill_9_after_an_async_save_resumes_from_it(tmp_path, runner):
    """FSDP2 with asynchronous saves: a kill -9 right after a save completed (its folder
    is published by the thread that waited for it, not at the next save) resumes from it;
    then Ctrl-C (SIGINT) ends the resumed run like SIGTERM: saved at the step, exit 0."""
    script = write_gpt(tmp_path, ["--model", "gpt", "--fsdp", "--async-checkpoint"])
    out, log = tmp_path / "out", tmp_path / "first.log"
    args = [*SMALL, "--ckpt-every", "5", "--max-steps", "100000"]
    pid = runner.start(script, args, log)
    _wait_for(lambda: (out / "step-5").is_dir(), log)
    os.kill(pid, signal.SIGKILL)
    assert runner.wait(pid, log).rc == -signal.SIGKILL
    published = checkpoint(out)["step"]
    assert published >= 5  # step 5 at least; 10 if it was saved before the kill

    log = tmp_path / "second.log"
    pid = runner.start(script, args, log)
    _wait_for(lambda: f"step {published + 2} |" in _text(log), log)
    os.kill(pid, signal.SIGINT)
    run = runner.wait(pid, log)
    assert run.rc == 0, run.output
    assert f"resumed from out/step-{published} at step {published} " in run.output
    saved = int(run.output.split("saved a checkpoint at step ")[1].split(";")[0])
    assert checkpoint(out)["step"] == saved > published


#: Trains the composed train.py (in this folder) once for each (argv, nan_steps, skip) of
#: its argument (JSON): the model's output is NaN on the forward calls in nan_steps
#: (counted from 1; one a step here), and from step `skip` (counted from 0) on, each
#: step draws the batch of the step after it, so that the run never sees that one. A
#: test hook: nothing of it is in the script.
NAN_DRIVER = r"""
import json
import sys

import train

forward, get_batch = train.GPT.forward, train.get_batch
for argv, nan_steps, skip in json.loads(sys.argv[1]):
    calls = []

    def poisoned(self, idx, calls=calls, nan_steps=nan_steps):
        calls.append(1)
        out = forward(self, idx)
        return out * float("nan") if len(calls) in nan_steps else out

    def shifted(tokens, args, key, *rest, skip=skip):
        seed, step = key
        return get_batch(tokens, args, (seed, step + (step >= skip)), *rest)

    train.GPT.forward = poisoned
    train.get_batch = shifted if skip is not None else get_batch
    sys.argv = ["train.py", *argv]
    try:
        train.main()
    except SystemExit as stop:
        print("exit:", stop.code, flush=True)
"""


def test_a_non_finite_step_is_skipped_and_changes_nothing(tmp_path, runner):
    """A planted NaN at step 3 of 6: the step is skipped (logged, counted), and the run
    ends with the weights and optimizer state, bit for bit, of a 5-step run that never saw
    that batch (constant learning rate); the checkpoint after it is finite. More than
    --max-bad-steps in a row stop the run with one line."""
    import torch

    write_gpt(tmp_path, ["--model", "gpt"])
    (tmp_path / "driver.py").write_text(NAN_DRIVER, encoding="utf-8")
    args = [*SMALL, "--lr-schedule", "constant", "--ckpt-every", "0"]
    runs = [
        ([*args, "--max-steps", "6", "--out", "nan"], [3], None),
        ([*args, "--max-steps", "5", "--out", "without"], [], 2),
        ([*args, "--max-steps", "9", "--max-bad-steps", "2", "--out", "bad"], [2, 3, 4], None),
    ]
    run = runner.run(tmp_path / "driver.py", [json.dumps(runs)])
    assert run.rc == 0, run.output
    assert "step 3: gradient norm nan, skipped" in run.output
    records = {r["step"]: r for r in metrics(tmp_path / "nan")}
    assert [records[s]["skipped_steps"] for s in range(1, 7)] == [0, 0, 1, 0, 0, 0]
    nan, without = checkpoint(tmp_path / "nan"), checkpoint(tmp_path / "without")
    assert (nan["step"], without["step"]) == (6, 5)
    for key in ("model", "exp_avg"):
        for name, value in without[key].items():
            assert torch.isfinite(nan[key][name]).all(), (key, name)
            assert torch.equal(nan[key][name], value), (key, name)
    assert "exit: 3 non-finite steps in a row: stopping" in run.output
    assert not list((tmp_path / "bad").glob("step-*"))  # nothing saved from them


def test_sigint_saves_and_the_log_is_line_buffered(tmp_path):
    """A plain process with stdout to a file and no PYTHONUNBUFFERED (as under SLURM): each
    log line is in the file while the run goes on; Ctrl-C (SIGINT) then saves at the end of
    the step and exits 0."""
    script = write_gpt(tmp_path, ["--model", "gpt"])
    env = {k: v for k, v in {**os.environ, **ENV}.items() if k != "PYTHONUNBUFFERED"}
    log = tmp_path / "run.log"
    with log.open("w") as stdout:
        proc = subprocess.Popen(
            [sys.executable, str(script), *SMALL, "--max-steps", "100000"],
            cwd=tmp_path,
            env=env,
            stdout=stdout,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_for(lambda: "step 3 |" in _text(log), log)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=120) == 0, _text(log)
        finally:
            proc.kill()
    saved = int(_text(log).split("saved a checkpoint at step ")[1].split(";")[0])
    assert checkpoint(tmp_path / "out")["step"] == saved >= 3


def test_sigkill_never_leaves_a_torn_checkpoint(tmp_path, runner):
    """Kill -9 at random moments while FSDP2 writes a checkpoint folder every step (most
    kills land in a write, leaving its temporary folder): the last published folder
    always loads, and a rerun continues from it."""
    script = write_gpt(tmp_path, ["--model", "gpt", "--fsdp"])
    args = [*SMALL, "--ckpt-every", "1", "--max-steps", "100000"]
    rng = random.Random(0)
    step = interrupted = 0
    for kill in range(6):
        log = tmp_path / f"kill-{kill}.log"
        pid = runner.start(script, args, log)
        _wait_for(lambda log=log, step=step: f"step {step + 2} |" in _text(log), log)
        time.sleep(rng.uniform(0, 0.05))
        os.kill(pid, signal.SIGKILL)
        run = runner.wait(pid, log)
        assert run.rc == -signal.SIGKILL, run.output
        interrupted += any((tmp_path / "out").glob(".step-*.tmp"))
        if kill:
            assert f"resumed from out/step-{step} at step {step} " in run.output, run.output
        state = checkpoint(tmp_path / "out")  # never torn
        assert state["step"] >= step + 1
        step = state["step"]
    assert interrupted, "no kill landed while a checkpoint was being written"
