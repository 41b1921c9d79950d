"""Run a tip's snippet and then its checks in one namespace, in a fresh Python process.

The test suite and ``python -m generator run`` both go through `run_variant`, so
what a contributor runs by hand is exactly what CI runs. The child process reads a JSON
payload on stdin and imports nothing but the snippet's own imports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from dataclasses import dataclass

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
) -> RunResult:
    """Run ``code`` then ``checks`` in a fresh interpreter; ``filename`` names it in tracebacks."""
    payload = json.dumps({"code": code, "checks": checks, "filename": filename})
    cmd = [sys.executable, *WARNING_FLAGS, "-m", "generator.harness"]
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


def _execute(code: str, checks: str | None, filename: str) -> None:
    # A real module registered as __main__, as when the file is run with `python file.py`:
    # classes defined in the snippet can then be pickled (torch.save) and found again.
    module = types.ModuleType("__main__")
    module.__file__ = filename
    sys.modules["__main__"] = module
    namespace = module.__dict__
    exec(compile(code, filename, "exec"), namespace)  # noqa: S102 - running the snippet is the point
    if checks:
        check_name = filename.removesuffix(".py") + ".checks"
        exec(compile(checks, check_name, "exec"), namespace)  # noqa: S102


if __name__ == "__main__":
    _payload = json.load(sys.stdin)
    _execute(_payload["code"], _payload["checks"], _payload["filename"])
