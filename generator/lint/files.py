"""The files the lint checks: found under the paths given, read and decoded as Python reads
them.

Only regular files are read: a FIFO, a device or a socket is refused in one line before a
byte is read (opening a FIFO nobody writes would wait for ever). A folder is searched for
``*.py`` without following symbolic links to folders; a ``*.py`` link that cannot be
followed (a loop) is skipped with one line. A file is decoded as CPython decodes it (its
byte-order mark, its coding declaration), and one it would refuse is refused here too, with
the reason and, where there is one, the position.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import stat
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from generator.lint.messages import Arg, LintError, Message

#: Folders never searched: virtual environments and caches by name (hidden folders, and
#: any folder holding a ``pyvenv.cfg`` or ``conda-meta``, are skipped as well).
SKIP_DIRS = frozenset({"__pycache__", "site-packages", "node_modules", "venv", "env"})

#: Bytes of a file looked at to tell binary files from source.
_SNIFF = 8192
_LINE_END = re.compile(rb"\r\n|\r|\n")


class LintUsageError(LintError):
    """A bad ``--select``/``--ignore`` code or a path that does not exist (exit status 2)."""


@dataclass(frozen=True, order=True)
class FileError:
    """A file that could not be checked, and where it went wrong. ``message`` is the English
    line; ``why`` the same as a `Message`, for other languages; ``internal``: an error of
    the lint itself, not of the file."""

    path: str
    line: int
    column: int
    message: str
    why: Message | None = field(default=None, compare=False)
    internal: bool = field(default=False, compare=False)

    @classmethod
    def of(
        cls, path: str, line: int, column: int, key: str, /, internal: bool = False, **args: Arg
    ) -> FileError:
        why = Message.of(key, **args)
        return cls(path, line, column, why.text("en"), why, internal)

    def text(self, lang: str = "en") -> str:
        """The message in ``lang``."""
        return self.message if self.why is None or lang == "en" else self.why.text(lang)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.message}"


@dataclass
class Found:
    """The files to check, and the entries skipped on the way (one line each)."""

    files: list[Path] = field(default_factory=list)
    skipped: list[FileError] = field(default_factory=list)


def discover(paths: Iterable[str | Path]) -> Found:
    """The files to check: each file given, and every ``*.py`` under each folder given
    (sorted, skipping hidden folders and virtual environments).

    Raises:
        LintUsageError: a path that does not exist, or an empty one.
    """
    out = Found()
    seen: set[str] = set()
    for raw in paths:
        if str(raw) == "":
            raise LintUsageError("empty_path")
        path = Path(raw)
        if path.is_dir():
            found = _walk(path, out.skipped)
        elif path.exists():
            found = [path]
        else:
            raise LintUsageError("not_found", path=str(raw))
        for p in found:
            key = os.path.realpath(p)
            if key not in seen:
                seen.add(key)
                out.files.append(p)
    return out


def _skip_dir(entry: os.DirEntry[str]) -> bool:
    if entry.name.startswith(".") or entry.name in SKIP_DIRS:
        return True
    return os.path.exists(os.path.join(entry.path, "pyvenv.cfg")) or os.path.isdir(
        os.path.join(entry.path, "conda-meta")
    )


def _walk(folder: Path, skipped: list[FileError]) -> list[Path]:
    out: list[Path] = []
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not _skip_dir(entry):
                        subdirs.append(Path(entry.path))
                elif entry.name.endswith(".py") and entry.is_file():
                    out.append(Path(entry.path))
            except OSError as err:  # a link that cannot be followed: a loop
                skipped.append(
                    FileError.of(display_path(Path(entry.path)), 1, 1, "skipped", reason=_why(err))
                )
        stack.extend(reversed(subdirs))
    return out


def _why(err: OSError) -> str:
    return err.strerror or str(err)


def printable(name: str) -> str:
    """``name`` safe to print on one line: a control character (a newline) written as its
    escape (``\\n``), a byte that was not UTF-8 (``surrogateescape``) as ``\\xff``."""
    if name.isprintable():
        return name
    out = []
    for ch in name:
        if 0xDC80 <= ord(ch) <= 0xDCFF:
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(ascii(ch)[1:-1])
    return "".join(out)


def display_path(path: Path) -> str:
    """``path`` relative to the working directory where it lies below it, else as given."""
    if not path.is_absolute():
        return str(path)
    try:
        return str(Path(os.path.realpath(path)).relative_to(Path.cwd()))
    except (ValueError, OSError):
        return str(path)


def read_bytes(path: Path, display: str) -> bytes | FileError:
    """The bytes of the regular file at ``path``, or why not (checked on the open file, so a
    FIFO is never waited on)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        return FileError.of(display, 1, 1, "read", reason=_why(err))
    try:
        with open(fd, "rb", closefd=False) as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return FileError.of(display, 1, 1, "not_regular")
            return f.read()
    except OSError as err:
        return FileError.of(display, 1, 1, "read", reason=_why(err))
    finally:
        os.close(fd)


def read_source(path: Path, display: str) -> str | FileError:
    """The text of ``path``, or why it cannot be read (not a regular file, binary, not in its
    declared encoding, an OS error)."""
    data = read_bytes(path, display)
    return data if isinstance(data, FileError) else decode_source(data, display)


def _cookie(data: bytes) -> str | None:
    """The encoding a coding declaration on one of the first two lines names."""
    for line in data.split(b"\n", 2)[:2]:
        match = tokenize.cookie_re.match(line.decode("latin-1"))
        if match:
            return match.group(1)
        if not tokenize.blank_re.match(line):
            break
    return None


def source_encoding(data: bytes, display: str) -> str | FileError:
    """The encoding CPython reads ``data`` in (``utf-8-sig`` with a byte-order mark), or why
    it refuses the file."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        codecs.lookup(encoding)
    except (SyntaxError, LookupError):
        cookie = _cookie(data.removeprefix(codecs.BOM_UTF8))
        if cookie is None:
            return "utf-8"  # invalid UTF-8 in the first lines: the decoding says where
        try:
            codecs.lookup(cookie)
        except LookupError:
            return FileError.of(display, 1, 1, "unknown_encoding", encoding=cookie)
        return FileError.of(display, 1, 1, "bom_cookie", encoding=cookie)
    return encoding


def decode_source(data: bytes, display: str) -> str | FileError:
    """``data`` decoded as Python source, or why Python would refuse it."""
    if b"\0" in data[:_SNIFF]:
        return FileError.of(display, 1, 1, "binary")
    encoding = source_encoding(data, display)
    if isinstance(encoding, FileError):
        return encoding
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as err:
        ends = [m.end() for m in _LINE_END.finditer(data, 0, err.start)]
        line, column = len(ends) + 1, err.start - (ends[-1] if ends else 0) + 1
        byte = f"{data[err.start]:02x}"
        return FileError.of(display, line, column, "decode", encoding=encoding, byte=byte)
    except (LookupError, UnicodeError, ValueError):  # rot13, base64, undefined, punycode...
        return FileError.of(display, 1, 1, "not_text_encoding", encoding=encoding)
    return text.removeprefix("\ufeff")
