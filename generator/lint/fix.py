"""Apply the fixes of the findings to the source, show them as a diff, write files.

Fixes carry ruff's applicability: ``--fix`` applies the safe ones, and the unsafe ones too
with ``--unsafe-fixes``. Each fix is a group of text edits at exact source positions
(`generator.lint.edits`); fixes that overlap one applied earlier wait for the next pass, and
the file is linted again after every pass (at most `MAX_PASSES`). Every fix was checked to
compile when the file was linted, and the text of each pass is compiled again (a fix that
breaks it is dropped alone). A file is written only when it changed, in its own encoding,
through a symbolic link to its target, atomically (a temporary file, then ``os.replace``),
or in place when the file has other hard links, which then see the new text too. The diff
is computed without difflib's "autojunk" heuristic, so a line that repeats in a long file
is never shown as removed and added again.
"""

from __future__ import annotations

import codecs
import difflib
import os
import stat
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.lint.edits import apply, keep_compiling, rounds, spans
from generator.lint.engine import Finding, lint_source
from generator.lint.files import FileError, printable, source_encoding
from generator.lint.lines import Lines, split_keepends
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
        name = printable(self.path)
        return unified_diff(
            split_keepends(self.before),
            split_keepends(self.after),
            name if absolute else f"a/{name}",
            name if absolute else f"b/{name}",
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
    return "".join(_terminated(line) for line in out)


def _terminated(line: str) -> str:
    """A diff line ended by a newline: one ended by a lone ``\\r`` (a CR-only file) gets one
    too, one with no end at all the ``\\ No newline at end of file`` marker."""
    if line.endswith("\n"):
        return line
    if line.endswith("\r"):
        return line + "\n"
    return line + "\n\\ No newline at end of file\n"


def applies(finding: Finding, unsafe: bool = False) -> bool:
    """Whether ``--fix`` (with ``--unsafe-fixes`` when ``unsafe``) applies ``finding``'s fix."""
    return bool(finding.edits) and (finding.fix == "safe" or (unsafe and finding.fix == "unsafe"))


def apply_fixes(source: str, findings: Sequence[Finding], unsafe: bool = False) -> tuple[str, int]:
    """``source`` with the non-overlapping fixes of ``findings`` applied (the unsafe ones too
    when ``unsafe``; of overlapping fixes, the first by position), and how many."""
    lines = Lines(source)
    fixes = []
    for finding in findings:
        if applies(finding, unsafe) and (placed := spans(lines, finding)) is not None:
            fixes.append((finding, placed))
    groups = rounds(fixes)
    if not groups:
        return source, 0
    return apply(source, groups[0]), len(groups[0])


def fix_source(
    source: str,
    path: str = "<string>",
    rules: Sequence[type[Rule]] | None = None,
    unsafe: bool = False,
    findings: Sequence[Finding] | None = None,
) -> tuple[str, int]:
    """Apply every safe fix (and unsafe one, when ``unsafe``) to ``source`` until none is
    left (or `MAX_PASSES`); return the new text and the number of fixes applied. The fixes
    of a pass are compiled together, and one that breaks the code is left out alone.
    ``findings``: those of ``source`` already found (with ``rules``), for the first pass.

    Raises:
        SyntaxError: ``source`` does not parse.
        RuleFailure: a rule raised on ``source``.
    """
    total = 0
    current = source
    for _ in range(MAX_PASSES):
        if findings is None:
            findings = lint_source(current, path, rules, compile_check=False)
        lines = Lines(current)
        chosen = [(f, p) for f in findings if applies(f, unsafe) and (p := spans(lines, f))]
        findings = None
        groups = rounds(chosen)
        group = keep_compiling(current, path, groups[0]) if groups else []
        if not group:
            break
        current, total = apply(current, group), total + len(group)
    return current, total


def fix_files(
    sources: dict[str, str],
    rules: Sequence[type[Rule]] | Mapping[str, Sequence[type[Rule]]] | None = None,
    unsafe: bool = False,
    findings: Sequence[Finding] | None = None,
) -> list[Fixed]:
    """The fixed text of each file in ``sources`` (path -> text) that has a fix to apply;
    ``rules`` for every file, or by path (as `LintResult.rules` holds them); ``findings``:
    those of these texts already found with these rules (a file with none to apply is then
    not linted again). A file on which a rule fails is left as it is (linting it reports
    the failure)."""
    found: dict[str, list[Finding]] | None = None
    if findings is not None:
        found = {path: [] for path in sources}
        for f in findings:
            if f.path in found:
                found[f.path].append(f)
    out = []
    for path, text in sources.items():
        chosen = rules.get(path) if isinstance(rules, Mapping) else rules
        first = None if found is None else found[path]
        if first is not None and not any(applies(f, unsafe) for f in first):
            continue
        try:
            after, fixed = fix_source(text, path, chosen, unsafe, first)
        except Exception:  # a rule failed on a fixed text: its lint says so
            continue
        if fixed:
            out.append(Fixed(path, text, after, fixed))
    return out


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to the file at ``path`` in the file's own encoding (its coding
    declaration, its byte-order mark): through a symbolic link to its target, which is
    replaced in one step (a temporary file beside it, its permission bits kept), or, when
    the file has other hard links, rewritten in place so that they keep sharing it.

    Raises:
        OSError: the file cannot be written (or is no longer a regular file).
        ValueError: its encoding cannot be told, or cannot hold ``text``.
    """
    target = Path(os.path.realpath(path))
    info = os.stat(target)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(f"{path}: not a regular file")
    with open(target, "rb") as f:
        head = f.read(4096)
    encoding = source_encoding(head, str(path))
    if isinstance(encoding, FileError):
        raise ValueError(encoding.message)
    bom = b""
    if encoding == "utf-8-sig":
        encoding, bom = "utf-8", codecs.BOM_UTF8
    data = bom + text.encode(encoding)
    if info.st_nlink > 1:
        with open(target, "r+b") as f:
            f.write(data)
            f.truncate()
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, stat.S_IMODE(info.st_mode))
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
