"""Check the user's script, then run it in this process as ``python SCRIPT ARGS`` would.

The script runs as ``__main__`` (``sys.modules["__main__"]``, so that pickling its classes
and spawning DataLoader workers work as under ``python``), with ``sys.argv`` set to
``[SCRIPT, *ARGS]``, ``__file__`` set, and the script's folder first on ``sys.path``. All
three are restored afterwards. The script's standard output goes to standard error while it
runs, so that the report alone is on standard output.
"""

from __future__ import annotations

import builtins
import contextlib
import sys
import time
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.doctor.frames import display, is_user_file
from generator.doctor.model import ScriptError
from generator.errors import UserError


class ScriptProblem(UserError):
    """The script cannot be run: missing, a folder, unreadable, or not Python (exit 2)."""


@dataclass
class Ran:
    """How the script's run ended."""

    how: str  # "stopped" (by the doctor), "finished", "exited" or "raised"
    seconds: float
    exit_code: int | None = None
    error: ScriptError | None = None
    namespace: dict[str, Any] = field(default_factory=dict)


def load(path: Path) -> types.CodeType:
    """The compiled script.

    Raises:
        ScriptProblem: it is missing, a folder, unreadable, or not valid Python.
    """
    if not path.exists():
        raise ScriptProblem(f"{path}: no such file")
    if path.is_dir():
        raise ScriptProblem(f"{path} is a folder: give the training script's file")
    try:
        source = path.read_bytes()
    except OSError as err:
        raise ScriptProblem(f"{path}: cannot read it: {err.strerror}") from None
    if b"\0" in source:
        raise ScriptProblem(f"{path}: not a Python script (it holds binary data)")
    try:
        return compile(source, str(path.resolve()), "exec", dont_inherit=True)
    except SyntaxError as err:
        where = f"{path}:{err.lineno or 1}:{err.offset or 1}"
        raise ScriptProblem(f"{where}: not a valid Python script: {err.msg}") from None
    except ValueError as err:
        raise ScriptProblem(f"{path}: not a Python script ({err})") from None


def run(path: Path, code: types.CodeType, args: list[str], stop: type[BaseException]) -> Ran:
    """Run ``code`` (of ``path``) as ``__main__`` with ``args``; ``stop`` is the exception
    the doctor raises to end it."""
    module = types.ModuleType("__main__")
    module.__dict__.update(
        __file__=str(path.resolve()), __builtins__=builtins, __loader__=None, __spec__=None
    )
    saved = sys.modules.get("__main__"), sys.argv, list(sys.path)
    sys.modules["__main__"] = module
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.resolve().parent))
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(sys.stderr):
            exec(code, module.__dict__)
        how, exit_code, error = "finished", 0, None
    except SystemExit as err:
        how, exit_code, error = "exited", _exit_code(err.code), None
    except KeyboardInterrupt:
        raise
    except BaseException as err:
        if isinstance(err, stop):
            how, exit_code, error = "stopped", None, None
        else:
            how, exit_code, error = "raised", 1, _script_error(err)
    finally:
        seconds = time.perf_counter() - start
        main, sys.argv, sys.path[:] = saved
        if main is not None:
            sys.modules["__main__"] = main
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
    return Ran(how, seconds, exit_code, error, module.__dict__)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")  # SystemExit("message"), as the interpreter prints it
    return 1


def _script_error(err: BaseException) -> ScriptError:
    """The exception's type and message, and the innermost frame in the user's code."""
    where: tuple[str, int] | None = None
    for frame in traceback.extract_tb(err.__traceback__):
        if is_user_file(frame.filename):
            where = (display(frame.filename), frame.lineno or 0)
    message = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return ScriptError(type(err).__name__, message, *(where or (None, None)))
