"""One line model for the whole lint: the one of Python's tokenizer.

``ast`` and the tokenizer end a line at ``\\r\\n``, ``\\r`` or ``\\n`` (and nowhere else: a
form feed, ``\\v``, ``\\x85`` or ``\\u2028`` is not a line end), and count columns in UTF-8
bytes. Everything here that turns an ``ast`` position into text uses `Lines`, so a CR-only
or mixed-line-ending file is read, reported and fixed like any other, and the line ends of
the file are kept when it is written back (the edits change the text between positions;
they never normalise the ends).

`Lines.punctuation` reads the punctuation between two nodes (the ``(`` of a call after its
name, the ``)`` of a parenthesised argument, the ``.`` of a method), skipping blanks,
comments and line continuations, so that an edit is placed at the character the tokenizer
reads, never found by searching the raw text (a ``(`` in a comment) or measured from an
``ast`` name (which Python normalises: NFKC).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from functools import cached_property

#: Where a line ends, for ``ast`` and the tokenizer.
LINE_END = re.compile(r"\r\n|\r|\n")

#: A position as ``ast`` gives it: 1-based line, 0-based column in UTF-8 bytes.
Position = tuple[int, int]


def split(source: str) -> list[str]:
    """The lines of ``source`` without their ends (``lines[0]`` is line 1)."""
    return source.split("\n") if "\r" not in source else LINE_END.split(source)


def split_keepends(source: str) -> list[str]:
    """The lines of ``source`` with their ends (for a diff)."""
    if not source:
        return []
    out: list[str] = []
    start = 0
    for match in LINE_END.finditer(source):
        out.append(source[start : match.end()])
        start = match.end()
    if start < len(source):
        out.append(source[start:])
    return out


def char_column(line: str, byte_col: int) -> int:
    """A 0-based character column from the ``ast`` module's UTF-8 byte column."""
    if line.isascii():
        return byte_col
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def byte_column(line: str, char_col: int) -> int:
    """The UTF-8 byte column of the 0-based character column ``char_col``."""
    if line.isascii():
        return char_col
    return len(line[:char_col].encode("utf-8"))


class Lines(list[str]):
    """The lines of ``source`` (without their ends), and the conversions between ``ast``
    positions and offsets in the text."""

    def __init__(self, source: str) -> None:
        super().__init__(split(source))
        self.source = source

    @cached_property
    def starts(self) -> list[int]:
        """The offset in ``source`` where each line starts."""
        if "\r" not in self.source:
            out, at = [], 0
            for line in self:
                out.append(at)
                at += len(line) + 1
            return out
        return [0, *(m.end() for m in LINE_END.finditer(self.source))]

    def valid(self, pos: Position) -> bool:
        """Whether ``pos`` is a position in the text (on a line, at most its end)."""
        line, col = pos
        if not 1 <= line <= len(self) or col < 0:
            return False
        text = self[line - 1]
        return col <= (len(text) if text.isascii() else len(text.encode("utf-8")))

    def offset(self, pos: Position) -> int:
        """The offset in ``source`` of ``pos``.

        Raises:
            IndexError: a position outside the text.
        """
        if not self.valid(pos):
            raise IndexError(f"no position {pos} in the text")
        line, col = pos
        return self.starts[line - 1] + char_column(self[line - 1], col)

    def char_position(self, pos: Position) -> tuple[int, int]:
        """``pos`` with its column counted in characters."""
        line, col = pos
        return line, char_column(self[line - 1], col) if 1 <= line <= len(self) else col

    def segment(self, start: Position, end: Position) -> str:
        """The text between two positions."""
        return self.source[self.offset(start) : self.offset(end)]

    def position(self, offset: int) -> Position:
        """The `Position` of an offset in ``source``."""
        line = bisect.bisect_right(self.starts, offset)
        text = self[line - 1]
        return line, byte_column(text, offset - self.starts[line - 1])

    def punctuation(self, start: int, end: int) -> Iterator[tuple[int, str]]:
        """The characters between two offsets that are not blank, a comment or a line
        continuation, with their offsets: the punctuation between two nodes (``)``, ``,``,
        ``(``, ``.``), where a string cannot be, so no tokenizer is needed."""
        source = self.source
        i = start
        while i < end:
            ch = source[i]
            if ch in " \t\f\r\n":
                i += 1
            elif ch == "#":
                while i < end and source[i] not in "\r\n":
                    i += 1
            elif ch == "\\" and i + 1 < end and source[i + 1] in "\r\n":
                i += 2
            else:
                yield i, ch
                i += 1
