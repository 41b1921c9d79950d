"""What a file's own comments suppress: ``# noqa`` on a statement, ``# pytorch-tips: noqa``
for the whole file.

* ``# noqa: PTT020`` (codes separated by commas) on any line of a statement silences those
  rules for findings in that statement; a bare ``# noqa`` silences every rule there, as in
  ruff and flake8. For a compound statement (``for``, ``with``, ``def``, ...) the statement
  is its header, not its body.
* ``# pytorch-tips: noqa`` on a line of its own silences every rule in the file;
  ``# pytorch-tips: noqa: PTT020, PTT021`` only those rules (ruff's ``# ruff: noqa``).

Comments are read with `tokenize`, so ``"# noqa"`` inside a string does not count; a file
whose text has no ``noqa`` at all is not tokenized.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from generator.lint.lines import split

_CODES = r"(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)"
_NOQA = re.compile(rf"#\s*noqa(?::\s*{_CODES})?", re.I)
_FILE_NOQA = re.compile(rf"#\s*pytorch-tips:\s*noqa(?::\s*{_CODES})?", re.I)

#: The codes a comment names; ``None`` means every rule (a bare ``noqa``).
Codes = frozenset[str] | None


def _codes(match: re.Match[str]) -> Codes:
    text = match.group("codes")
    if text is None:
        return None
    return frozenset(c.upper() for c in re.split(r"[\s,]+", text) if c)


def _merge(old: Codes | Literal[False], new: Codes) -> Codes:
    """Two comments on the same line (or file): every rule if either says so, else both sets."""
    if old is False:
        return new
    if old is None or new is None:
        return None
    return old | new


@dataclass(frozen=True)
class Suppressions:
    """The ``noqa`` comments of one file: by line, and for the whole file."""

    lines: Mapping[int, Codes] = field(default_factory=dict)
    #: False: no file-level comment; None: every rule; else the codes it names.
    whole_file: Codes | Literal[False] = False

    def file_silences(self, code: str) -> bool:
        """Whether a ``# pytorch-tips: noqa`` comment silences ``code`` in the whole file."""
        if self.whole_file is False:
            return False
        return self.whole_file is None or code in self.whole_file

    def silences(self, code: str, first: int, last: int) -> bool:
        """Whether a ``# noqa`` on one of the lines ``first``..``last`` silences ``code``."""
        if not self.lines:
            return False
        for line in range(first, last + 1):
            if line in self.lines:
                codes = self.lines[line]
                if codes is None or code in codes:
                    return True
        return False


NONE = Suppressions()


def _comments(source: str) -> list[tuple[int, str, bool]]:
    """(line, text, alone on its line) of every comment of ``source``."""
    out = []
    try:  # universal newlines: lines end where ast ends them (\r, \r\n, \n)
        for tok in tokenize.generate_tokens(io.StringIO(source, newline=None).readline):
            if tok.type == tokenize.COMMENT:
                alone = not tok.line[: tok.start[1]].strip()
                out.append((tok.start[0], tok.string, alone))
    except (tokenize.TokenError, SyntaxError, IndentationError):  # pragma: no cover - parsed
        for i, line in enumerate(split(source), 1):
            at = line.find("#")
            if at >= 0:
                out.append((i, line[at:], not line[:at].strip()))
    return out


def suppressions(source: str) -> Suppressions:
    """The ``noqa`` comments of ``source``."""
    if "noqa" not in source and "NOQA" not in source and "Noqa" not in source:
        return NONE
    lines: dict[int, Codes] = {}
    whole: Codes | Literal[False] = False
    for line, text, alone in _comments(source):
        if alone and (match := _FILE_NOQA.search(text)) is not None:
            whole = _merge(whole, _codes(match))
            continue
        match = _NOQA.search(text)
        if match is not None:
            lines[line] = _merge(lines.get(line, False), _codes(match))
    return Suppressions(lines, whole)


def statement_lines(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> tuple[int, int]:
    """The lines where a ``# noqa`` applies to a finding at ``node``: the statement that holds
    it (a compound statement's header only), and ``node``'s own lines."""
    first = getattr(node, "lineno", 1)
    last = getattr(node, "end_lineno", None) or first
    stmt: ast.AST | None = node
    while stmt is not None and not isinstance(stmt, ast.stmt):
        stmt = parents.get(stmt)
    if not isinstance(stmt, ast.stmt):  # None: no statement holds it
        return first, last
    start = stmt.lineno
    body = getattr(stmt, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        end = max(start, body[0].lineno - 1)  # the header: up to the first line of the body
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = min([start, *(d.lineno for d in stmt.decorator_list)])
    else:
        end = stmt.end_lineno or start
    return min(start, first), max(end, last)
