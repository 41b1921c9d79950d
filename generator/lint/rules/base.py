"""The base class of every lint rule, and what a rule reports.

A rule is a small class in the style of Fixit 2's ``LintRule``: a stable ``code``, a
``severity``, a one-line ``message``, the ``tip`` it enforces (``tips/<tip>.yaml``), whether
it can fix what it finds, and ``VALID`` / ``INVALID`` example code that the test suite runs
(``tests/lint/test_lint.py``). Its docstring says why the pattern is a problem; the rule table
of the site is generated from these attributes. `Rule.check` receives the analysed
file (`generator.lint.analysis.Context`) and yields `Report` objects.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal

if TYPE_CHECKING:
    from generator.lint.analysis import Context

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")


@dataclass(frozen=True)
class Edit:
    """Replace the source between two positions with ``text`` (an insertion when they are
    equal). Positions are ``(line, column)`` as the ``ast`` module gives them: 1-based lines,
    0-based columns counted in UTF-8 bytes."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str


@dataclass(frozen=True)
class Invalid:
    """An INVALID example; ``fixed`` is the code after ``--fix`` where the rule fixes it."""

    code: str
    fixed: str | None = None


@dataclass
class Report:
    """One finding of a rule at ``node`` (its first line and column), with an optional fix
    (edits applied together) and an optional message that replaces the rule's own."""

    node: ast.AST
    edits: list[Edit] = field(default_factory=list)
    message: str | None = None


class Rule:
    """Base class of the rules. Subclasses set the class attributes and `check`."""

    #: Stable code, ``PTT`` and three digits; never reused for another rule.
    code: ClassVar[str]
    #: Short kebab-case name (``torch-load-weights-only``).
    name: ClassVar[str]
    #: ``error`` (correctness, security), ``warning`` (performance), ``info`` (depends on
    #: context).
    severity: ClassVar[Severity]
    #: What is wrong, in one line.
    message: ClassVar[str]
    #: The id of the tip this rule enforces: ``tips/<tip>.yaml``.
    tip: ClassVar[str]
    #: Whether the rule can fix some of its findings, and how safely: ``safe`` fixes keep the
    #: program's behaviour and are applied by ``--fix``; ``unsafe`` fixes are never applied.
    fixable: ClassVar[bool] = False
    fix_safety: ClassVar[Literal["safe", "unsafe"] | None] = None
    #: Code the rule must not report, and code it must report (with the fixed code).
    VALID: ClassVar[tuple[str, ...]] = ()
    INVALID: ClassVar[tuple[str | Invalid, ...]] = ()

    def check(self, ctx: Context) -> Iterator[Report]:
        """Yield a `Report` for each occurrence of the pattern in ``ctx``."""
        raise NotImplementedError

    @classmethod
    def description(cls) -> str:
        """The rule's docstring as one paragraph: why the pattern is a problem."""
        return " ".join((cls.__doc__ or "").split())

    @classmethod
    def invalid_examples(cls) -> list[Invalid]:
        return [i if isinstance(i, Invalid) else Invalid(i) for i in cls.INVALID]


# --- building fixes: edits at the positions the ast module gives ----------------------------


def start_of(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def end_of(node: ast.AST) -> tuple[int, int]:
    return (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def replace(node: ast.AST, text: str) -> Edit:
    """Replace the whole of ``node``."""
    return Edit(start_of(node), end_of(node), text)


def insert(at: tuple[int, int], text: str) -> Edit:
    return Edit(at, at, text)


def rename_attribute(node: ast.Attribute, new: str) -> Edit:
    """Replace the last name of ``a.b.old`` with ``new``."""
    line, end = end_of(node)
    return Edit((line, end - len(node.attr.encode("utf-8"))), (line, end), new)


def open_paren(lines: list[str], call: ast.Call) -> tuple[int, int]:
    """The position just after the ``(`` of ``call``."""
    line, col = end_of(call.func)
    while line <= len(lines):
        raw = lines[line - 1].encode("utf-8")
        i = raw.find(b"(", col)
        if i >= 0:
            return (line, i + 1)
        line, col = line + 1, 0
    raise ValueError("no opening parenthesis")  # pragma: no cover - ast guarantees one


def after_last_argument(lines: list[str], call: ast.Call) -> tuple[tuple[int, int], bool]:
    """Where to add an argument to ``call``, and whether it already has arguments."""
    args: list[ast.AST] = [*call.args, *call.keywords]
    if not args:
        return open_paren(lines, call), False
    return max(end_of(a) for a in args), True


def add_keyword(lines: list[str], call: ast.Call, text: str) -> Edit:
    """Append the keyword argument ``text`` (``weights_only=True``) to ``call``."""
    at, has_args = after_last_argument(lines, call)
    return insert(at, f", {text}" if has_args else text)
