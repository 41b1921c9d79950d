"""Run code and then its checks in one namespace, in a fresh Python process started with
warnings as errors: `run_python`, its fork server (`_Zygote`) and the child's side.

`generator.records.harness.run_variant` runs a tip's snippet through here, or through
`generator.records.launch` (torchrun) for a distributed one, which starts its ranks with the
same `WARNING_FLAGS` and `child_env` and runs the launch checks with `run_python`. The child
process reads a JSON payload on stdin and imports nothing but the snippet's own imports.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import types
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def run_python(
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
    cmd = [sys.executable, *WARNING_FLAGS, "-m", "generator.records.process"]
    # A process group of its own, as the zygote's children have: on a timeout the processes the
    # snippet started (DataLoader workers, servers) are killed with it.
    group = hasattr(os, "killpg")
    with subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(device),
        start_new_session=group,
    ) as proc:
        try:
            out, err = proc.communicate(payload, timeout=timeout)
        except subprocess.TimeoutExpired:
            if group:
                with suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()
            out, err = proc.communicate()
            return RunResult(False, f"{out}{err}\ntimed out after {timeout:.0f} s", timed_out=True)
    return RunResult(proc.returncode == 0, out + err)


class _Zygote:
    """A Python process, started like a snippet's own (same flags and environment), that imports
    torch once and then forks one fresh child per snippet.

    Each child is a new process (its own ``__main__``, globals and CUDA context; CUDA is never
    initialised in the zygote), so snippets stay isolated; only the ~3 s import of torch and
    torch._dynamo is shared. A child is killed with its process group when it runs past the timeout. If the
    zygote cannot start or dies, `run_python` falls back to a plain subprocess.
    """

    def __init__(self, device: str) -> None:
        self.device = device
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, *WARNING_FLAGS, "-m", "generator.records.process", "--zygote"],
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

    # The point: children start with torch imported, and torch.compile's front end (1.5 CPU-s
    # more, which 31 tips would each pay).
    import torch._dynamo  # noqa: F401

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
                except BaseException:  # report it as the snippet's failure
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
        exec(compile(request["probe"], probe_name, "exec"), namespace)
    exec(compile(code, filename, "exec"), namespace)  # running the snippet is the point
    if checks:
        check_name = filename.removesuffix(".py") + ".checks"
        exec(compile(checks, check_name, "exec"), namespace)


if __name__ == "__main__":
    if sys.argv[1:] == ["--zygote"]:
        _serve_forks()
    else:
        _execute(json.load(sys.stdin))
