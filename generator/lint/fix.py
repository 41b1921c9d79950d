"""Apply the safe fixes of the findings to the source, show them as a diff, write files.

Each fix is a group of text edits at exact source positions; groups that overlap one
applied earlier wait for the next pass, and the file is linted again after every pass
(at most `MAX_PASSES`). A result that no longer parses is thrown away, and a file
is written only when it changed, atomically (a temporary file, then ``os.replace``).
"""

from __future__ import annotations

import ast
import codecs
import difflib
import os
import tempfile
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.lint.engine import Finding, char_column, lint_source
from generator.lint.rules.base import Rule

MAX_PASSES = 10


@dataclass
class Fixed:
    """The fixed text of one file and how many findings its fixes resolved."""

    path: str
    before: str
    after: str
    fixed: int

    @property
    def changed(self) -> bool:
        return self.after != self.before

    def diff(self) -> str:
        """A unified diff, ``a/<path>`` to ``b/<path>``, as ``git diff`` prints it."""
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=self.path if Path(self.path).is_absolute() else f"a/{self.path}",
            tofile=self.path if Path(self.path).is_absolute() else f"b/{self.path}",
        )
        return "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines
        )


def _offsets(source: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(source):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _offset(source: str, starts: list[int], pos: tuple[int, int]) -> int:
    line, byte_col = pos
    begin = starts[line - 1]
    end = starts[line] if line < len(starts) else len(source)
    return begin + char_column(source[begin:end], byte_col)


def _conflict(lo: int, hi: int, t_lo: int, t_hi: int) -> bool:
    """Whether two edited spans share a character, or insert at the same place."""
    return max(lo, t_lo) < min(hi, t_hi) or lo == t_lo or t_lo < lo < t_hi or lo < t_lo < hi


def apply_fixes(source: str, findings: Sequence[Finding]) -> tuple[str, int]:
    """``source`` with the non-overlapping fixes of ``findings`` applied, and how many."""
    starts = _offsets(source)
    taken: list[tuple[int, int]] = []
    chosen: list[tuple[int, int, int, str]] = []  # start, order, end, text
    applied = 0
    order = 0
    for finding in findings:
        if not finding.fixable or not finding.edits:
            continue
        spans = [
            (_offset(source, starts, e.start), _offset(source, starts, e.end), e.text)
            for e in finding.edits
        ]
        lo = min(s for s, _, _ in spans)
        hi = max(e for _, e, _ in spans)
        if any(_conflict(lo, hi, t_lo, t_hi) for t_lo, t_hi in taken):
            continue  # overlaps a fix already chosen: the next pass gets it
        taken.append((lo, hi))
        for s, e, text in spans:
            chosen.append((s, order, e, text))
            order += 1
        applied += 1
    if not chosen:
        return source, 0
    chosen.sort()
    out, pos = [], 0
    for s, _, e, text in chosen:
        out.append(source[pos:s])
        out.append(text)
        pos = max(pos, e)
    out.append(source[pos:])
    return "".join(out), applied


def fix_source(
    source: str, path: str = "<string>", rules: Sequence[type[Rule]] | None = None
) -> tuple[str, int]:
    """Apply every safe fix to ``source`` until none is left (or `MAX_PASSES`);
    return the new text and the number of fixes applied. Raises ``SyntaxError`` if
    ``source`` does not parse; a pass whose result does not parse is discarded."""
    total = 0
    current = source
    for _ in range(MAX_PASSES):
        findings = lint_source(current, path, rules)
        new, applied = apply_fixes(current, findings)
        if not applied:
            break
        try:
            ast.parse(new, path)
        except SyntaxError:
            break
        current, total = new, total + applied
    return current, total


def fix_files(sources: dict[str, str], rules: Sequence[type[Rule]] | None = None) -> list[Fixed]:
    """The fixed text of each file in ``sources`` (path -> text) that has a safe fix."""
    out = []
    for path, text in sources.items():
        after, fixed = fix_source(text, path, rules)
        if fixed:
            out.append(Fixed(path, text, after, fixed))
    return out


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step, in the file's own encoding (its coding
    declaration, its byte-order mark), keeping its permission bits."""
    encoding, bom = "utf-8", b""
    mode = None
    if path.exists():
        mode = path.stat().st_mode & 0o7777
        with path.open("rb") as f:
            encoding, _ = tokenize.detect_encoding(f.readline)
        if encoding == "utf-8-sig":
            encoding, bom = "utf-8", codecs.BOM_UTF8
    data = bom + text.encode(encoding)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
