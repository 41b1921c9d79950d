"""Run a distributed snippet: the script every rank of a torchrun job runs (a variant with a
``launch``, see `generator.records.schema.Launch`).

`run_launch` writes the snippet to a temporary directory under its own name (``after.py``) and
starts N ranks as ``torchrun --standalone --nproc_per_node N`` does (`generator.records.ranks`
forks them from one import of torch, with torchrun's environment; a launch with ``torchrun:
true``, or ``PYTORCH_TIPS_TORCHRUN=1``, runs torchrun itself), each rank a thin wrapper
(`_RANK_WRAPPER`) that runs the script, then the checks, in one namespace; the
``launch.checks`` then run once in a fresh process (`generator.records.process.run_python`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from generator.records.process import WARNING_FLAGS, RunResult, child_env, run_python

if TYPE_CHECKING:
    from generator.records.schema import Launch

#: What each rank runs (written next to the snippet as ``.harness/rank.py``). It sends its output
#: to ``rank<N>.log``, runs the snippet as ``__main__`` under its own file name, then the checks in
#: the same namespace. The snippet's ``destroy_process_group`` calls are deferred until the checks
#: ran, so the checks can still use collectives. It records its outcome in ``rank<N>.status`` and
#: ends with ``os._exit`` after a last barrier: a gloo rank can abort in interpreter shutdown.
_RANK_WRAPPER = r"""
import json, os, sys, time, traceback, types

harness = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(harness, "payload.json"), encoding="utf-8") as f:
    payload = json.load(f)
rank = int(os.environ["RANK"])
log = os.open(os.path.join(harness, f"rank{rank}.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.dup2(log, 1)
os.dup2(log, 2)
sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
with open(os.path.join(harness, f"rank{rank}.pid"), "w") as f:
    f.write(str(os.getpid()))


def finish(status, code):
    with open(os.path.join(harness, f"rank{rank}.status"), "w") as f:
        f.write(status)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


import torch.distributed as dist

deferred = []
real_destroy = dist.destroy_process_group


def destroy_process_group(group=None):
    deferred.append(group)


dist.destroy_process_group = destroy_process_group
module = types.ModuleType("__main__")
module.__file__ = payload["script"]
sys.modules["__main__"] = module
namespace = module.__dict__
error = None
try:
    if payload["probe"]:
        exec(compile(payload["probe"], payload["probe_name"], "exec"), namespace)
except BaseException:
    traceback.print_exc()
    print(f"\n[harness] rank {rank}: the probe failed", file=sys.stderr)
    finish("checks-failed", 1)
if payload["expect"] == "hang" and payload["checks"]:
    import threading

    def check_while_hung():
        # The main thread is blocked in the hang; the checks see the namespace as far as the
        # snippet got. The harness kills the job once every rank has a status.
        while not os.path.exists(os.path.join(harness, "hung")):
            time.sleep(0.05)
        try:
            exec(compile(payload["checks"], payload["checks_name"], "exec"), namespace)
        except BaseException:
            traceback.print_exc()
            print(f"\n[harness] rank {rank}: the checks failed while the job hung", file=sys.stderr)
            status = "checks-failed"
        else:
            status = "hung; checks ok"
        with open(os.path.join(harness, f"rank{rank}.status"), "w") as f:
            f.write(status)
        sys.stdout.flush()
        sys.stderr.flush()

    threading.Thread(target=check_while_hung, daemon=True).start()
with open(os.path.join(harness, f"rank{rank}.started"), "w"):
    pass
try:
    with open(payload["script"], encoding="utf-8") as f:
        source = f.read()
    exec(compile(source, payload["script"], "exec"), namespace)
except SystemExit as err:
    if err.code not in (0, None):
        print(f"[harness] rank {rank}: the snippet exited with {err.code!r}", file=sys.stderr)
        finish("snippet-failed", 1)
except BaseException as err:
    if payload["expect"] != "error" or isinstance(err, KeyboardInterrupt):
        traceback.print_exc()
        print(f"\n[harness] rank {rank}: the snippet raised {type(err).__name__}", file=sys.stderr)
        finish("snippet-failed", 1)
    traceback.print_exc()
    print(f"\n[harness] rank {rank}: the snippet raised {type(err).__name__} (expected)", file=sys.stderr)
    error = err
if payload["checks"]:
    if payload["expect"] == "error":
        namespace["error"] = error
    try:
        exec(compile(payload["checks"], payload["checks_name"], "exec"), namespace)
    except BaseException as err:
        traceback.print_exc()
        print(f"\n[harness] rank {rank}: the checks failed: {type(err).__name__}", file=sys.stderr)
        finish("checks-failed", 1)
if error is not None:
    finish("snippet-raised", 1)
dist.destroy_process_group = real_destroy
try:
    if dist.is_initialized():
        dist.barrier()  # no rank leaves while another still runs checks that talk to it
except Exception as err:
    print(f"[harness] rank {rank}: another rank left early ({err})", file=sys.stderr)
    finish("waiting for a rank that failed", 1)
finish("ok", 0)
"""


def _launch_env(device: str, launch: Launch) -> dict[str, str]:
    env = child_env(device)
    env.update(launch.env)
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)  # a harness run inside a torchrun job starts a job of its own
    return env


def _kill_job(proc: subprocess.Popen[bytes], harness: Path) -> None:
    """Kill the launcher and every rank (each rank runs in a session of its own)."""
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pid_file in harness.glob("rank*.pid"):
        with suppress(ValueError, ProcessLookupError, PermissionError):
            os.killpg(int(pid_file.read_text()), signal.SIGKILL)
    proc.wait()


def _check_while_hung(harness: Path, nproc: int, checks: bool, deadline: float) -> None:
    """Have every rank of a hanging job run the checks (in a thread), and wait for them."""
    if not checks:
        return
    (harness / "hung").touch()
    while time.monotonic() < deadline:
        if len(list(harness.glob("rank*.status"))) == nproc:
            return
        time.sleep(0.05)


def run_launch(
    code: str,
    checks: str | None,
    filename: str,
    device: str,
    timeout: float,
    launch: Launch,
    probe: str | None,
) -> RunResult:
    """Run ``code`` as every rank's script under torchrun, ``checks`` in each rank, then
    ``launch.checks`` once in a fresh process; the result's output names each rank."""
    workdir = Path(tempfile.mkdtemp(prefix="tip-launch-"))
    try:
        return _run_launch_in(workdir, code, checks, filename, device, timeout, launch, probe)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run_launch_in(
    workdir: Path,
    code: str,
    checks: str | None,
    filename: str,
    device: str,
    timeout: float,
    launch: Launch,
    probe: str | None,
) -> RunResult:
    harness = workdir / ".harness"
    harness.mkdir()
    script = workdir / Path(filename).name
    script.write_text(code, encoding="utf-8")
    payload = {
        "script": str(script),
        "checks": checks,
        "checks_name": str(script.with_suffix(".checks")),
        "probe": probe,
        "probe_name": str(script.with_suffix(".probe")),
        "expect": launch.expect,
    }
    (harness / "payload.json").write_text(json.dumps(payload), encoding="utf-8")
    (harness / "rank.py").write_text(_RANK_WRAPPER, encoding="utf-8")
    torchrun = launch.torchrun or os.environ.get("PYTORCH_TIPS_TORCHRUN") == "1"
    if torchrun:
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc_per_node={launch.nproc}",
            "--no-python",  # each rank: this interpreter with the snippets' warning flags
            sys.executable,
            *WARNING_FLAGS,
            str(harness / "rank.py"),
        ]
    else:  # the same ranks, forked from one import of torch (generator.records.ranks)
        cmd = [
            sys.executable,
            *WARNING_FLAGS,
            "-m",
            "generator.records.ranks",
            str(launch.nproc),
            str(harness / "rank.py"),
        ]
    start = time.monotonic()
    with (harness / "torchrun.log").open("wb") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=workdir,
            env=_launch_env(device, launch),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        all_started: float | None = None
        hung = timed_out = False
        while proc.poll() is None:
            now = time.monotonic()
            if all_started is None and len(list(harness.glob("rank*.started"))) == launch.nproc:
                all_started = now
            if launch.hang_s is not None and all_started and now - all_started > launch.hang_s:
                hung = True
                _check_while_hung(harness, launch.nproc, bool(checks), deadline=start + timeout)
            elif now - start > timeout:
                timed_out = True
            if hung or timed_out:
                _kill_job(proc, harness)
                break
            time.sleep(0.05)
        exit_code = None if hung or timed_out else proc.returncode
    elapsed = time.monotonic() - start
    outputs, statuses = [], []
    for rank in range(launch.nproc):
        log_file, status_file = harness / f"rank{rank}.log", harness / f"rank{rank}.status"
        outputs.append(log_file.read_text(errors="replace") if log_file.exists() else "")
        if status_file.exists():
            statuses.append(status_file.read_text())
        elif not (harness / f"rank{rank}.started").exists():
            statuses.append("did not start the snippet")
        else:
            statuses.append("killed while running" if exit_code is None else "stopped")
    problem = _launch_problem(launch, exit_code, statuses, timed_out, timeout, bool(checks))
    report = _launch_report(
        launch, script.name, outputs, statuses, exit_code, elapsed, harness, bool(problem), torchrun
    )
    if problem:
        return RunResult(False, f"{report}\n{problem}\n", timed_out=timed_out)
    if launch.checks:
        preset = {"outputs": outputs, "exit_code": exit_code, "elapsed_s": elapsed}
        after = run_python(
            "",
            launch.checks,
            filename.removesuffix(".py") + ".launch.py",
            device,
            timeout,
            preset={**preset, "workdir": str(workdir)},
            cwd=str(workdir),
        )
        if not after.ok:
            return RunResult(
                False,
                f"{report}\n{after.output}\nthe checks after the job (launch.checks) failed\n",
                timed_out=after.timed_out,
            )
        report += after.output
    return RunResult(True, report)


def _launch_problem(
    launch: Launch,
    exit_code: int | None,
    statuses: list[str],
    timed_out: bool,
    timeout: float,
    checked: bool,
) -> str | None:
    """Why the job did not end as ``launch.expect`` says (None when it did)."""
    failed = [f"rank {r}" for r, s in enumerate(statuses) if s == "checks-failed"]
    if timed_out:
        return f"the job timed out after {timeout:.0f} s"
    if failed:
        return "the checks failed in " + ", ".join(failed)
    if launch.expect == "success":
        bad = [f"rank {r} ({s})" for r, s in enumerate(statuses) if s != "ok"]
        if exit_code != 0 or bad:
            return f"the job failed (torchrun exit code {exit_code}): " + (
                ", ".join(bad) or "every rank finished, torchrun did not"
            )
    elif launch.expect == "error":
        if exit_code == 0:
            return "the job was expected to fail with an error, but it exited with 0"
        if "snippet-raised" not in statuses:
            return "the job was expected to fail with an error raised by a rank, but none raised"
    elif exit_code is not None:
        return f"the job was expected to hang for {launch.hang_s} s, but it ended (exit code {exit_code})"
    elif checked and not all(s == "hung; checks ok" for s in statuses):
        return "the checks did not finish in every rank of the hanging job"
    return None


def _launch_report(
    launch: Launch,
    script: str,
    outputs: list[str],
    statuses: list[str],
    exit_code: int | None,
    elapsed: float,
    harness: Path,
    failed: bool,
    torchrun: bool = True,
) -> str:
    """The job's output: each rank's under a header naming the rank (torchrun's own first, when
    the job did not end as expected)."""
    ended = "stopped by the harness" if exit_code is None else f"exit code {exit_code}"
    how = "" if torchrun else ", its ranks forked as torchrun starts them"
    parts = [f"$ {launch.command(script)}   # {ended}, {elapsed:.1f} s{how}"]
    torchrun_log = harness / "torchrun.log"
    if failed and torchrun_log.exists():
        text = torchrun_log.read_text(errors="replace").strip()
        if text:
            name = "torchrun" if torchrun else "launcher"
            parts.append(f"--- {name} ---\n{text[-2000:]}")
    for rank, (output, status) in enumerate(zip(outputs, statuses, strict=True)):
        parts.append(f"--- rank {rank} ({status}) ---\n{output.rstrip()}")
    return "\n".join(parts) + "\n"
