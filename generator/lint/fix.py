"""Apply the fixes of the findings to the source, show them as a diff, write files.

Fixes carry ruff's applicability: ``--fix`` applies the safe ones, and the unsafe ones too
with ``--unsafe-fixes``. Each fix is a group of text edits at exact source positions; groups
that overlap one applied earlier wait for the next pass, and the file is linted again after
every pass (at most `MAX_PASSES`). A result that no longer parses is thrown away, and a file
is written only when it changed, atomically (a temporary file, then ``os.replace``). The
diff is computed without difflib's "autojunk" heuristic, so a line that repeats in a long
file is never shown as removed and added again.
"""

from __future__ import annotations

import ast
import codecs
import difflib
import os
import tempfile
import tokenize
from collections.abc import Mapping, Sequence
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
        absolute = Path(self.path).is_absolute()
        return unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            self.path if absolute else f"a/{self.path}",
            self.path if absolute else f"b/{self.path}",
        )


def _range(start: int, length: int) -> str:
    """A hunk range as ``diff -u`` writes it (1-based; ``N,0`` after line N when empty)."""
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"


def unified_diff(a: list[str], b: list[str], fromfile: str, tofile: str, context: int = 3) -> str:
    """``difflib.unified_diff`` of two lists of lines (with their line ends), matched with
    ``autojunk=False``: difflib's default treats a line that appears in more than 1% of a
    file of 200+ lines as junk, so a repeated blank or ``pass`` line can show as changed."""
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        if not out:
            out += [f"--- {fromfile}\n", f"+++ {tofile}\n"]
        first, last = group[0], group[-1]
        out.append(
            f"@@ -{_range(first[1], last[2] - first[1])} +{_range(first[3], last[4] - first[3])} @@\n"
        )
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            if tag in {"replace", "delete"}:
                out += ["-" + line for line in a[i1:i2]]
            if tag in {"replace", "insert"}:
                out += ["+" + line for line in b[j1:j2]]
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out
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


def applies(finding: Finding, unsafe: bool = False) -> bool:
    """Whether ``--fix`` (with ``--unsafe-fixes`` when ``unsafe``) applies ``finding``'s fix."""
    return bool(finding.edits) and (finding.fix == "safe" or (unsafe and finding.fix == "unsafe"))


def apply_fixes(source: str, findings: Sequence[Finding], unsafe: bool = False) -> tuple[str, int]:
    """``source`` with the non-overlapping fixes of ``findings`` applied (the unsafe ones too
    when ``unsafe``), and how many."""
    starts = _offsets(source)
    taken: list[tuple[int, int]] = []
    chosen: list[tuple[int, int, int, str]] = []  # start, order, end, text
    applied = 0
    order = 0
    for finding in findings:
        if not applies(finding, unsafe):
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
    source: str,
    path: str = "<string>",
    rules: Sequence[type[Rule]] | None = None,
    unsafe: bool = False,
) -> tuple[str, int]:
    """Apply every safe fix (and unsafe one, when ``unsafe``) to ``source`` until none is
    left (or `MAX_PASSES`); return the new text and the number of fixes applied. Raises
    ``SyntaxError`` if ``source`` does not parse; a pass whose result does not parse is
    discarded."""
    total = 0
    current = source
    for _ in range(MAX_PASSES):
        findings = lint_source(current, path, rules)
        new, applied = apply_fixes(current, findings, unsafe)
        if not applied:
            break
        try:
            ast.parse(new, path)
        except SyntaxError:
            break
        current, total = new, total + applied
    return current, total


def fix_files(
    sources: dict[str, str],
    rules: Sequence[type[Rule]] | Mapping[str, Sequence[type[Rule]]] | None = None,
    unsafe: bool = False,
) -> list[Fixed]:
    """The fixed text of each file in ``sources`` (path -> text) that has a fix to apply;
    ``rules`` for every file, or by path (as `LintResult.rules` holds them)."""
    out = []
    for path, text in sources.items():
        chosen = rules.get(path) if isinstance(rules, Mapping) else rules
        after, fixed = fix_source(text, path, chosen, unsafe)
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
