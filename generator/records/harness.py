"""Run a tip's snippet and then its checks in one namespace, in a fresh Python process.

The test suite and ``python -m generator run`` both go through `run_variant`, so
what a contributor runs by hand is exactly what CI runs. The child process reads a JSON
payload on stdin and imports nothing but the snippet's own imports.

A snippet with a ``launch`` (see `generator.records.schema.Launch`) is the script every rank of a
distributed job runs: `run_variant` writes it to a temporary directory under its own name
(``after.py``) and starts it with ``python -m torch.distributed.run --standalone
--nproc_per_node N``, each rank a thin wrapper (`_RANK_WRAPPER`) that runs the script, then the
checks, in one namespace (see `_run_launch`).
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
import types
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from generator.records.schema import Launch

#: Python options of the child: deprecation and future warnings are errors, so a stale API
#: fails the run instead of scrolling past. One exception: torch 2.13's own compiler imports
#: ``torch.utils.mkldnn``, which still uses ``torch.jit.script_method`` and warns about it on
#: import. That is torch's internal use, not the snippet's, so exactly that message is ignored
#: (``torch.jit.script`` and every other deprecated call in a snippet still fail).
WARNING_FLAGS = (
    "-W",
    "error::DeprecationWarning",
    "-W",
    "error::FutureWarning",
    "-W",
    "ignore:`torch.jit.script_method` is deprecated:DeprecationWarning",
)
DEFAULT_TIMEOUT_S = 180


@dataclass
class RunResult:
    """Outcome of one snippet run."""

    ok: bool
    output: str
    timed_out: bool = False


def child_env(device: str) -> dict[str, str]:
    """Environment for a snippet run on ``device`` (``cpu`` hides every GPU)."""
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")  # parallel test workers must not oversubscribe cores
    env["PYTHONHASHSEED"] = "0"
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def run_variant(
    code: str,
    checks: str | None,
    filename: str,
    device: str = "cpu",
    timeout: float = DEFAULT_TIMEOUT_S,
    launch: Launch | None = None,
    probe: str | None = None,
) -> RunResult:
    """Run ``code`` then ``checks`` in a fresh interpreter; ``filename`` names it in tracebacks.

    ``probe`` (check-only) runs just before ``code`` in the same namespace. With ``launch``,
    ``code`` is the script of every rank of a torchrun job (`_run_launch`).
    """
    if launch is not None:
        return _run_launch(code, checks, filename, device, timeout, launch, probe)
    return _run_python(code, checks, filename, device, timeout, probe=probe)


def _run_python(
    code: str,
    checks: str | None,
    filename: str,
    device: str,
    timeout: float,
    preset: dict[str, Any] | None = None,
    cwd: str | None = None,
    probe: str | None = None,
) -> RunResult:
    """Run ``code`` then ``checks`` in one fresh process (a zygote's fork where possible).

    ``preset`` (JSON values) are defined in the namespace first; ``cwd`` is its working directory.
    """
    request = {
        "code": code,
        "checks": checks,
        "filename": filename,
        "preset": preset,
        "cwd": cwd,
        "probe": probe,
    }
    if os.environ.get("PYTORCH_TIPS_ZYGOTE", "1") != "0" and hasattr(os, "fork"):
        result = _zygote(device).run(request, timeout)
        if result is not None:
            return result
    payload = json.dumps(request)
    cmd = [sys.executable, *WARNING_FLAGS, "-m", "generator.records.harness"]
    try:
        proc = subprocess.run(
            cmd,
            input=payload,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=child_env(device),
        )
    except subprocess.TimeoutExpired as err:
        out = (err.stdout or b"").decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        return RunResult(False, f"{out}\ntimed out after {timeout:.0f} s", timed_out=True)
    return RunResult(proc.returncode == 0, proc.stdout + proc.stderr)


class _Zygote:
    """A Python process, started like a snippet's own (same flags and environment), that imports
    torch once and then forks one fresh child per snippet.

    Each child is a new process (its own ``__main__``, globals and CUDA context; CUDA is never
    initialised in the zygote), so snippets stay isolated; only the ~1.5 s import of torch is
    shared. A child is killed with its process group when it runs past the timeout. If the
    zygote cannot start or dies, `run_variant` falls back to a plain subprocess.
    """

    def __init__(self, device: str) -> None:
        self.device = device
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, *WARNING_FLAGS, "-m", "generator.records.harness", "--zygote"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=child_env(self.device),
            )
        return self.proc

    def run(self, request: dict[str, Any], timeout: float) -> RunResult | None:
        request = {**request, "timeout": timeout}
        try:
            proc = self._start()
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            reply = json.loads(line)
        except (OSError, ValueError, AssertionError):
            if self.proc is not None:
                self.proc.kill()
            self.proc = None
            return None
        if reply.get("timed_out"):
            return RunResult(False, f"{reply['output']}\ntimed out after {timeout:.0f} s", True)
        return RunResult(reply["returncode"] == 0, reply["output"])


_ZYGOTES: dict[str, _Zygote] = {}


def _zygote(device: str) -> _Zygote:
    if device not in _ZYGOTES:
        _ZYGOTES[device] = _Zygote(device)
    return _ZYGOTES[device]


def _serve_forks() -> None:
    """The zygote's loop: one JSON request per stdin line, one JSON reply per stdout line."""
    import warnings

    import torch  # noqa: F401 - the point: children start with torch imported

    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
            with warnings.catch_warnings():  # Python 3.12 warns about fork() with threads
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
            if pid == 0:  # the child: a fresh process for one snippet
                code = 1
                try:
                    os.setpgid(0, 0)
                    os.dup2(log.fileno(), 1)
                    os.dup2(log.fileno(), 2)
                    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
                    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
                    _execute(request)
                    code = 0
                except SystemExit as err:
                    code = err.code if isinstance(err.code, int) else (0 if err.code is None else 1)
                except BaseException:  # noqa: BLE001 - report it as the snippet's failure
                    import traceback

                    traceback.print_exc()
                finally:
                    try:
                        sys.stdout.flush()
                        sys.stderr.flush()
                    finally:
                        os._exit(code)
            deadline = time.monotonic() + float(request["timeout"])
            timed_out, status = False, 0
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() > deadline:
                    timed_out = True
                    with suppress(ProcessLookupError):
                        os.killpg(pid, signal.SIGKILL)
                    _, status = os.waitpid(pid, 0)
                    break
                time.sleep(0.02)
            log.seek(0)
            reply = {
                "returncode": os.waitstatus_to_exitcode(status),
                "output": log.read(),
                "timed_out": timed_out,
            }
        out.write(json.dumps(reply) + "\n")
        out.flush()


def _execute(request: dict[str, Any]) -> None:
    code, checks, filename = request["code"], request["checks"], request["filename"]
    if request.get("cwd"):
        os.chdir(request["cwd"])
    # A real module registered as __main__, as when the file is run with `python file.py`:
    # classes defined in the snippet can then be pickled (torch.save) and found again.
    module = types.ModuleType("__main__")
    module.__file__ = filename
    sys.modules["__main__"] = module
    namespace = module.__dict__
    namespace.update(request.get("preset") or {})
    if "workdir" in namespace:
        namespace["workdir"] = Path(namespace["workdir"])
    if request.get("probe"):
        probe_name = filename.removesuffix(".py") + ".probe"
        exec(compile(request["probe"], probe_name, "exec"), namespace)  # noqa: S102
    exec(compile(code, filename, "exec"), namespace)  # noqa: S102 - running the snippet is the point
    if checks:
        check_name = filename.removesuffix(".py") + ".checks"
        exec(compile(checks, check_name, "exec"), namespace)  # noqa: S102


# --- distributed snippets: torchrun -------------------------------------------------------------

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
    """Kill torchrun and every rank (torchrun starts each rank in a session of its own)."""
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


def _run_launch(
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
        launch, script.name, outputs, statuses, exit_code, elapsed, harness, bool(problem)
    )
    if problem:
        return RunResult(False, f"{report}\n{problem}\n", timed_out=timed_out)
    if launch.checks:
        preset = {"outputs": outputs, "exit_code": exit_code, "elapsed_s": elapsed}
        after = _run_python(
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
) -> str:
    """The job's output: each rank's under a header naming the rank (torchrun's own first, when
    the job did not end as expected)."""
    ended = "stopped by the harness" if exit_code is None else f"exit code {exit_code}"
    parts = [f"$ {launch.command(script)}   # {ended}, {elapsed:.1f} s"]
    torchrun_log = harness / "torchrun.log"
    if failed and torchrun_log.exists():
        text = torchrun_log.read_text(errors="replace").strip()
        if text:
            parts.append(f"--- torchrun ---\n{text[-2000:]}")
    for rank, (output, status) in enumerate(zip(outputs, statuses, strict=True)):
        parts.append(f"--- rank {rank} ({status}) ---\n{output.rstrip()}")
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--zygote"]:
        _serve_forks()
    else:
        _execute(json.load(sys.stdin))
