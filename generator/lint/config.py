"""The lint's settings in ``pyproject.toml``: ``[tool.pytorch-tips.lint]``.

.. code-block:: toml

    [tool.pytorch-tips.lint]
    select = ["PTT0"]            # codes or prefixes; "ALL" for every rule, opt-in ones too
    ignore = ["PTT049"]
    [tool.pytorch-tips.lint.per-file-ignores]
    "tests/*" = ["PTT020", "PTT021"]
    "legacy.py" = ["ALL"]

A file is checked with the settings of the nearest ``pyproject.toml`` above it that has this
table (as ruff does), or of the file given with ``--config``. ``per-file-ignores`` patterns are
``fnmatch`` globs over the file's path relative to that ``pyproject.toml``'s folder (a
pattern without ``/`` also matches the file name alone). On the command line, ``--select``
replaces the configured ``select`` and ``--ignore`` adds to the configured ``ignore``.

Parsed with the standard library's `tomllib`. A mistake (invalid TOML, an unknown key, a
wrong type, an unknown code) is one `LintConfigError` naming the file, line and column.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from generator.lint.messages import LintError, Message

TABLE = ("tool", "pytorch-tips", "lint")
KEYS = ("select", "ignore", "per-file-ignores")
_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


class LintConfigError(LintError):
    """A ``[tool.pytorch-tips.lint]`` table that cannot be used (exit status 2)."""


@dataclass(frozen=True)
class LintConfig:
    """The settings of one ``pyproject.toml`` (none: every field empty)."""

    path: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    def ignored_for(self, file: Path) -> tuple[str, ...]:
        """The codes ``per-file-ignores`` drops for ``file``."""
        if not self.per_file_ignores or self.path is None:
            return ()
        try:
            rel = file.resolve().relative_to(self.path.parent.resolve()).as_posix()
        except ValueError:
            rel = file.as_posix()
        out: list[str] = []
        for pattern, codes in self.per_file_ignores:
            if fnmatch.fnmatchcase(rel, pattern) or (
                "/" not in pattern and fnmatch.fnmatchcase(file.name, pattern)
            ):
                out += codes
        return tuple(out)


NO_CONFIG = LintConfig()


def _line_of(text: str, key: str) -> tuple[int, int]:
    """Where ``key`` is written in the lint table of ``text`` (line, column), roughly: the first
    line after the table's header that starts with the key, else the header, else 1:1."""
    lines = text.splitlines()
    header = re.compile(r'^\s*\[\s*tool\s*\.\s*"?pytorch-tips"?\s*\.\s*lint\b')
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    dotted = re.compile(r'^\s*"?lint"?\s*\.\s*"?' + re.escape(key) + r'"?\s*=')
    plain = re.compile(r'^\s*"?' + re.escape(key) + r'"?\s*[=\]]')
    for i, line in enumerate(lines[start or 0 :], (start or 0) + 1):
        stripped = line.strip()
        if plain.match(line) or dotted.match(line) or stripped.endswith(f"{key}]"):
            return i, len(line) - len(line.lstrip()) + 1
    return ((start + 1) if start is not None else 1), 1


def _codes(
    value: object,
    where: str,
    known: Callable[[str], bool],
    error: Callable[[str, Message], Exception],
) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise error(where, Message.of("config_codes"))
    out = []
    for item in value:
        if not isinstance(item, str):
            raise error(where, Message.of("config_code_type", value=repr(item)))
        code = item.strip().upper()
        if code != "ALL" and not known(code):
            raise error(where, Message.of("config_unknown_code", code=item))
        out.append(code)
    return tuple(out)


def parse_config(text: str, path: Path, known: Callable[[str], bool]) -> LintConfig | None:
    """The lint table of a ``pyproject.toml`` whose text is ``text`` (None without one);
    ``known(code)`` tells whether a code or prefix names some rule.

    Raises:
        LintConfigError: ``path:line:col: reason``.
    """

    def error(key: str, reason: Message) -> LintConfigError:
        line, col = _line_of(text, key)
        return LintConfigError("config", path=str(path), line=line, col=col, key=key, reason=reason)

    import tomllib  # only when a configuration is read

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        match = _POSITION.search(str(err))
        line, col = (match.group(1), match.group(2)) if match else ("1", "1")
        reason = _POSITION.sub("", str(err)).strip()
        raise LintConfigError(
            "config_toml", path=str(path), line=line, col=col, reason=reason
        ) from None
    table: object = data
    for depth, part in enumerate(TABLE):
        if not isinstance(table, dict) or part not in table:
            return None
        table = table[part]
        if depth and not isinstance(table, dict):  # [tool] pytorch-tips = 3: ours, and wrong
            raise error(part, Message.of("config_table"))
    if not isinstance(table, dict):  # pragma: no cover - the loop checked it
        raise error("lint", Message.of("config_table"))
    for key in table:
        if key not in KEYS:
            raise error(str(key), Message.of("config_unknown_key", keys=", ".join(KEYS)))
    select = table.get("select")
    ignores = table.get("per-file-ignores", {})
    if not isinstance(ignores, dict):
        raise error("per-file-ignores", Message.of("config_per_file"))
    per_file = tuple(
        (str(pattern), _codes(codes, str(pattern), known, error))
        for pattern, codes in ignores.items()
    )
    return LintConfig(
        path=path,
        select=None if select is None else _codes(select, "select", known, error),
        ignore=_codes(table.get("ignore", []), "ignore", known, error),
        per_file_ignores=per_file,
    )


def read_config(path: Path, known: Callable[[str], bool]) -> LintConfig:
    """The lint table of the ``pyproject.toml`` at ``path``.

    Raises:
        LintConfigError: the file cannot be read, or its table is wrong.
    """
    try:
        text = _read_regular(path)
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise LintConfigError("config_read", path=str(path), reason=reason) from None
    return parse_config(text, path, known) or LintConfig(path)


def _read_regular(path: Path) -> str:
    """The UTF-8 text of the regular file at ``path`` (a FIFO is refused, never waited on).

    Raises:
        OSError: not a regular file, or unreadable.
        UnicodeDecodeError: not UTF-8.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        with open(fd, "rb", closefd=False) as f:
            return f.read().decode("utf-8")
    finally:
        os.close(fd)


class ConfigFinder:
    """The settings that apply to each file: its nearest ``pyproject.toml`` with a
    ``[tool.pytorch-tips.lint]`` table, looked up once per folder."""

    def __init__(self, known: Callable[[str], bool], explicit: Path | None = None) -> None:
        self.known = known
        self.explicit = None if explicit is None else read_config(explicit, known)
        self._by_folder = lru_cache(maxsize=None)(self._find)

    def for_file(self, file: Path) -> LintConfig:
        if self.explicit is not None:
            return self.explicit
        return self._by_folder(file.resolve().parent)

    def _find(self, folder: Path) -> LintConfig:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                text = _read_regular(candidate)
            except (OSError, UnicodeDecodeError):
                text = ""
            if "pytorch-tips" in text:  # a file without the table is never parsed
                config = parse_config(text, candidate, self.known)
                if config is not None:
                    return config
        if folder.parent == folder:
            return NO_CONFIG
        return self._by_folder(folder.parent)


def split_codes(text: str | Sequence[str] | None) -> list[str]:
    """Codes from ``--select``-style text (comma-separated) or a list of such texts."""
    if text is None:
        return []
    parts = [text] if isinstance(text, str) else list(text)
    return [c.strip().upper() for p in parts for c in p.split(",") if c.strip()]
