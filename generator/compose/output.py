"""Where ``compose`` writes the script: `output_path` checks ``-o PATH`` before anything is
composed, `write_script` writes the file atomically and `write_stdout` prints it. Every
failure is a `ComposeError` (one line, exit status 2), never a traceback, and nothing is
left half-written."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from generator.compose.option_types import ComposeError, OutputExists


def _cannot(path: str, err: OSError) -> ComposeError:
    return ComposeError(f"cannot write {path}: {err.strerror or err}")


def output_path(path: str | None, force: bool = False) -> Path | None:
    """The file that ``-o PATH`` names (None for standard output: no ``-o``, or ``-``).

    A symlink is written through: its target is replaced and the link kept. Refused, each
    with one line: an empty name, a folder, a FIFO, a device or a socket, a symlink loop,
    a path the system cannot look up (too long, under a file), and an existing file, or a
    symlink to one or to nothing, without ``force``.

    Raises:
        OutputExists: the file exists and ``force`` is false, or it is a folder.
        ComposeError: any other refusal.
    """
    if path is None or path == "-":
        return None
    if not path.strip():
        raise ComposeError("-o needs a file name")
    target = Path(path)
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return target  # a new file (its folders are made when it is written)
    except OSError as err:
        raise _cannot(path, err) from None
    if stat.S_ISLNK(info.st_mode):
        try:
            target = Path(os.path.realpath(path, strict=True))
            info = os.stat(target)
        except FileNotFoundError:  # a dangling symlink: its target would be created
            if not force:
                raise OutputExists(
                    f"{path} is a symlink to a missing file: use --force to write it"
                ) from None
            return Path(os.path.realpath(path))
        except OSError as err:  # a loop
            raise _cannot(path, err) from None
    if stat.S_ISDIR(info.st_mode):
        raise OutputExists(f"{path} is a folder: give the script's file name")
    if not stat.S_ISREG(info.st_mode):
        raise ComposeError(f"{path} is not a regular file (a FIFO, a device or a socket)")
    if not force:
        raise OutputExists(f"{path} exists: use --force to overwrite it")
    return target


def write_script(text: str, target: Path, shown: str | None = None) -> None:
    """Write ``text`` to ``target`` (from `output_path`) atomically: a temporary file in
    the same folder, flushed, then renamed over it. A new file gets the usual permissions
    (0666 minus the umask), a replaced one keeps its own.

    Raises:
        ComposeError: the system refused (``shown``, default ``target``, names the path).
    """
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise _cannot(shown or str(target), err) from None


def write_stdout(text: str) -> None:
    """Print ``text`` on standard output.

    Raises:
        ComposeError: standard output is closed or cannot be written (a full disk).
    """
    if sys.stdout is None:
        raise ComposeError("standard output is closed: give -o PATH")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as err:
        # What is still buffered would fail again at exit: send it nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise ComposeError(f"cannot write to standard output: {err.strerror}") from None
