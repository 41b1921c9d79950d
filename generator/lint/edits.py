"""Fixes as text edits: where they go, which of them apply together, and whether the result
is still a program.

A fix is the group of `Edit` s of one finding. `rounds` puts the fixes of a file into rounds
of fixes that touch no common text (a sort of their spans, then one scan: no pairwise
comparison), `apply` writes one round into the text, and `sound` keeps a fix only when the
text with it applied still compiles (``compile()``, which also refuses what ``ast.parse``
lets through: a repeated keyword argument, ``return`` outside a function). The fixes of a
round are compiled together; when that fails, the round is split in halves until each fix
that breaks the code is found and dropped alone, so one bad fix never blocks the others, and
a finding shown as fixable is one that ``--fix`` fixes. A fix that edits inside an f-string
is dropped as well: the text of ``f"{x=}"`` is part of the output.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from generator.lint.lines import Lines, Position

if TYPE_CHECKING:
    from generator.lint.engine import Finding

#: Rounds of fixes checked or applied in one file: ``--fix`` re-lints between rounds, at
#: most this many times.
MAX_ROUNDS = 10
#: Compilations spent on finding the fixes that break a file, at most (the fixes left
#: unchecked then are dropped).
MAX_COMPILES = 64

#: One edit as offsets in the text: start, end, replacement.
Span = tuple[int, int, str]


def compiles(source: str, path: str = "<string>") -> bool:
    """Whether Python compiles ``source`` (top-level ``await`` allowed, as in a notebook),
    its warnings silenced."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, path, "exec", flags=flags, dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return False
    return True


def spans(lines: Lines, finding: Finding) -> list[Span] | None:
    """The edits of ``finding``'s fix as offsets, or None when one is not a place in the
    text (a helper that could not place it)."""
    out = []
    for edit in finding.edits:
        if not (lines.valid(edit.start) and lines.valid(edit.end)):
            return None
        start, end = lines.offset(edit.start), lines.offset(edit.end)
        if end < start:
            return None
        out.append((start, end, edit.text))
    return out


def rounds(
    fixes: Sequence[tuple[Finding, list[Span]]],
) -> list[list[tuple[Finding, list[Span]]]]:
    """``fixes`` in rounds: in each, no two fixes share a character or insert at the same
    place; the earlier fix (by position) comes first."""
    order = sorted(fixes, key=lambda f: (min(s for s, _, _ in f[1]), max(e for _, e, _ in f[1])))
    out: list[list[tuple[Finding, list[Span]]]] = []
    last: list[tuple[int, int]] = []  # the hull of the last fix taken in each round
    for fix in order:
        lo = min(s for s, _, _ in fix[1])
        hi = max(e for _, e, _ in fix[1])
        for i, (t_lo, t_hi) in enumerate(last):
            if lo >= t_hi and lo != t_lo:
                out[i].append(fix)
                last[i] = (lo, hi)
                break
        else:
            if len(out) < MAX_ROUNDS:  # beyond: left for a later run
                out.append([fix])
                last.append((lo, hi))
    return out


def apply(source: str, fixes: Sequence[tuple[Finding, list[Span]]]) -> str:
    """``source`` with the edits of ``fixes`` (none of which overlap) written in."""
    chosen = sorted(
        (start, i, end, text)
        for i, (start, end, text) in enumerate(s for _, group in fixes for s in group)
    )
    out, pos = [], 0
    for start, _, end, text in chosen:
        out.append(source[pos:start])
        out.append(text)
        pos = max(pos, end)
    out.append(source[pos:])
    return "".join(out)


class _Budget:
    def __init__(self, n: int) -> None:
        self.left = n

    def compiles(self, source: str, path: str) -> bool | None:
        if self.left <= 0:
            return None
        self.left -= 1
        return compiles(source, path)


def keep_compiling(
    source: str, path: str, group: list[tuple[Finding, list[Span]]]
) -> list[tuple[Finding, list[Span]]]:
    """The fixes of one round (``group``) whose text, applied together, compiles."""
    return _keep(source, path, group, _Budget(MAX_COMPILES))


def _keep(
    source: str,
    path: str,
    group: list[tuple[Finding, list[Span]]],
    budget: _Budget,
) -> list[tuple[Finding, list[Span]]]:
    """The fixes of ``group`` to keep: all when they compile together, else those of each
    half that compile on their own (a fix alone that does not is dropped)."""
    ok = budget.compiles(apply(source, group), path)
    if ok or ok is None:
        return group if ok else []
    if len(group) == 1:
        return []
    half = len(group) // 2
    kept = _keep(source, path, group[:half], budget) + _keep(source, path, group[half:], budget)
    if len(kept) == len(group) or not kept:
        return kept
    both = budget.compiles(apply(source, kept), path)
    return kept if both else []


def _outermost(regions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted regions with the nested ones merged into those around them."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(regions):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _inside(regions: list[tuple[int, int]], starts: list[int], placed: list[Span]) -> bool:
    """Whether an edit starts or ends strictly inside one of ``regions``."""
    for start, end, _ in placed:
        for at in (start, end):
            i = bisect.bisect_right(starts, at) - 1
            if i >= 0 and regions[i][0] < at < regions[i][1]:
                return True
    return False


def _drop(finding: Finding) -> Finding:
    return dataclasses.replace(finding, edits=(), fix=None, fixable=False)


def sound(
    source: str,
    lines: Lines,
    findings: list[Finding],
    fstrings: Sequence[tuple[Position, Position]] = (),
    path: str = "<string>",
    compile_check: bool = True,
) -> list[Finding]:
    """``findings``, where a fix is kept only if it can be placed, edits no f-string and
    (with ``compile_check``) leaves code that compiles, checked round by round (see the
    module's text)."""
    candidates: list[tuple[Finding, list[Span]]] = []
    bad: set[int] = set()
    outer = _outermost([(lines.offset(s), lines.offset(e)) for s, e in fstrings])
    starts = [s for s, _ in outer]
    for i, finding in enumerate(findings):
        if not finding.edits:
            continue
        placed = spans(lines, finding)
        if placed is None or (outer and _inside(outer, starts, placed)):
            bad.add(i)
            continue
        candidates.append((finding, placed))
    if candidates and compile_check:
        budget = _Budget(MAX_COMPILES)
        kept: set[int] = set()
        for group in rounds(candidates):
            kept |= {id(f) for f, _ in _keep(source, path, group, budget)}
        bad |= {i for i, f in enumerate(findings) if f.edits and id(f) not in kept}
    if not bad:
        return findings
    return [_drop(f) if i in bad else f for i, f in enumerate(findings)]
