"""What an editor needs from the lint, in the editor's terms, without the protocol: positions
in LSP units, a fix as text edits, the ``# noqa`` edit that silences a finding, the hover
text. `generator.lint.lsp` wraps these in the Language Server Protocol (pygls); they are
plain functions, tested without a server.

LSP positions are 0-based lines, split where ``ast`` splits them (``\\r\\n``, ``\\r``,
``\\n``: the protocol's line ends too), and columns counted in the encoding the client and
server agreed on: UTF-16 code units unless the client offers UTF-8 or UTF-32.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass

from generator.lint.engine import Finding
from generator.lint.lines import Lines, char_column

#: A range in LSP terms: (start line, start character), (end line, end character).
Range = tuple[tuple[int, int], tuple[int, int]]

_NOQA_CODES = re.compile(r"#\s*noqa:\s*[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*", re.I)


@dataclass(frozen=True)
class TextEdit:
    """Replace ``range`` with ``text`` (LSP positions)."""

    range: Range
    text: str


class Document:
    """One editor buffer's text, and its positions in the client's units (``utf-16``,
    ``utf-8`` or ``utf-32``). ``text`` may start with a byte-order mark the lint does not
    see (its positions on the first line then move by one character)."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.bom = 1 if text.startswith("\ufeff") else 0
        self.lines = Lines(text[self.bom :])
        self.encoding = encoding

    def _units(self, line: str, chars: int) -> int:
        if self.encoding == "utf-32" or line.isascii():
            return chars
        if self.encoding == "utf-8":
            return len(line[:chars].encode("utf-8"))
        return len(line[:chars].encode("utf-16-le")) // 2

    def position(self, line: int, char: int) -> tuple[int, int]:
        """The LSP position of a 1-based line and a 0-based character column (clamped to the
        text)."""
        if line > len(self.lines):
            return len(self.lines) - 1, self._units(self.lines[-1], len(self.lines[-1]))
        text = self.lines[line - 1]
        char = min(max(char, 0), len(text)) + (self.bom if line == 1 else 0)
        return line - 1, self._units(("\ufeff" if line == 1 and self.bom else "") + text, char)

    def finding_range(self, finding: Finding) -> Range:
        """Where ``finding`` is (its node), in LSP positions."""
        end_line = finding.end_line or finding.line
        end_column = finding.end_column or finding.column
        return (
            self.position(finding.line, finding.column - 1),
            self.position(end_line, end_column - 1),
        )

    def char(self, client: tuple[int, int]) -> tuple[int, int]:
        """A client position as (1-based line, 0-based character column)."""
        line, units = client
        if line >= len(self.lines):
            return len(self.lines), len(self.lines[-1])
        text = ("\ufeff" if line == 0 and self.bom else "") + self.lines[line]
        if self.encoding == "utf-32" or text.isascii():
            chars = units
        elif self.encoding == "utf-8":
            chars = len(text.encode("utf-8")[:units].decode("utf-8", "ignore"))
        else:
            chars = len(text.encode("utf-16-le")[: units * 2].decode("utf-16-le", "ignore"))
        if line == 0 and self.bom:
            chars -= 1
        return line + 1, max(chars, 0)

    def fix_edits(self, finding: Finding) -> list[TextEdit]:
        """``finding``'s fix as text edits (none without one)."""
        out = []
        for edit in finding.edits:
            (line, col), (end_line, end_col) = edit.start, edit.end
            start = self.position(line, char_column(self.lines[line - 1], col))
            end = self.position(end_line, char_column(self.lines[end_line - 1], end_col))
            out.append(TextEdit((start, end), edit.text))
        return out

    def whole(self) -> Range:
        """The range of the whole text."""
        last = len(self.lines)
        return (0, 0), self.position(last, len(self.lines[-1]))

    def noqa_edit(self, finding: Finding) -> TextEdit | None:
        """The edit that adds ``# noqa: CODE`` for ``finding``: to the codes of a ``# noqa``
        already on one of its lines, else at the end of the first of its lines that does not
        end inside a string or with a backslash. None where no line can take it."""
        code = finding.rule
        last = finding.end_line or finding.line
        ends = self._string_line_ends()
        for line in range(finding.line, last + 1):
            text = self.lines[line - 1]
            match = _NOQA_CODES.search(text)
            if match and not _in_string(ends, line):
                at = self.position(line, match.end())
                return TextEdit((at, at), f", {code}")
        for line in range(finding.line, last + 1):
            text = self.lines[line - 1]
            if _in_string(ends, line) or text.rstrip().endswith("\\"):
                continue
            stripped = len(text.rstrip())
            start, end = self.position(line, stripped), self.position(line, len(text))
            return TextEdit((start, end), f"  # noqa: {code}")
        return None

    def _string_line_ends(self) -> set[int]:
        """The lines whose end lies inside a string (a triple-quoted string spanning lines)."""
        out: set[int] = set()
        try:
            readline = io.StringIO(self.lines.source, newline=None).readline
            for tok in tokenize.generate_tokens(readline):
                if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                    out.update(range(tok.start[0], tok.end[0]))
        except (tokenize.TokenError, SyntaxError):
            pass
        return out


def _in_string(ends: set[int], line: int) -> bool:
    return line in ends


def hover_text(findings: list[Finding], explain: Callable[[str], str]) -> str:
    """The hover of the findings under the cursor: each rule's ``--explain`` text once
    (``explain(code)``), as Markdown (its code is indented by four spaces: code blocks)."""
    codes = dict.fromkeys(f.rule for f in findings)
    return "\n\n---\n\n".join(explain(code) for code in codes)
