"""Which source files are the user's, and where the user's code is in a stack.

The profiler names each Python frame's file relative to the ``sys.path`` entry it was found
under (``torch/optim/adam.py``, ``train.py``), or absolute; a file is the user's when it lies
outside the Python installation (standard library, site-packages) and outside this package.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from functools import cache
from pathlib import Path


@cache
def _library_roots() -> tuple[str, ...]:
    roots = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.add(str(Path(__file__).resolve().parent.parent))  # generator/: the doctor itself
    return tuple(sorted(os.path.realpath(r) + os.sep for r in roots))


@cache
def resolve(name: str) -> str | None:
    """The absolute path of a frame's file name as the profiler or a code object gives it;
    None for ``<frozen ...>``, ``<string>`` and files that cannot be found."""
    if not name or name.startswith("<"):
        return None
    if os.path.isabs(name):
        return os.path.realpath(name)
    for entry in sys.path:
        candidate = os.path.join(entry or os.getcwd(), name)
        if os.path.isfile(candidate):
            return os.path.realpath(candidate)
    return None


@cache
def is_user_file(name: str) -> bool:
    """Whether the file ``name`` (a frame's) is the user's code."""
    path = resolve(name)
    return path is not None and not path.startswith(_library_roots())


def display(name: str) -> str:
    """A user file's path as the report shows it: relative to the working folder where it
    lies below it, else absolute."""
    path = resolve(name) or name
    try:
        return str(Path(path).relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def user_frame(depth: int = 2) -> tuple[str, int] | None:
    """The innermost frame of the user's code in the current stack, ``depth`` frames up
    from the caller of this function: (file, line)."""
    frame = sys._getframe(depth)
    while frame is not None:
        name = frame.f_code.co_filename
        if is_user_file(name):
            return display(name), frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return None
