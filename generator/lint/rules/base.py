"""The base class of every lint rule, and what a rule reports.

A rule is a small class in the style of Fixit 2's ``LintRule``: a stable ``code``, a
``severity``, a one-line ``message`` (in English and Chinese), the ``tip`` it enforces
(``tips/<tip>.yaml``), whether it can fix what it finds and how safely, and ``VALID`` /
``INVALID`` example code that the test suite runs (``tests/lint/test_lint.py``). Its docstring
(and ``why_zh``) says why the pattern is a problem. These attributes are the one source of the
rule's text wherever it appears: the CLI's findings and ``--explain``, the rule table and the
rule pages of the site, SARIF. `Rule.check` receives the analysed file
(`generator.lint.analysis.Context`) and yields `Report` objects.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal

from generator.lint.lines import Lines
from generator.lint.syntax import span

if TYPE_CHECKING:
    from generator.lint.analysis import Context

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
#: How a fix may be applied, as in ruff: ``safe`` fixes keep the program's behaviour and
#: ``--fix`` applies them; ``unsafe`` ones may change it and need ``--unsafe-fixes`` too.
Applicability = Literal["safe", "unsafe"]
LANGS = ("en", "zh")


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
    """An INVALID example; ``fixed`` is the code after ``--fix`` where the rule fixes it, and
    ``instead`` the code to write instead where it does not (the rule's page and
    ``--explain`` show the pair; the tests check that the rule is silent on it)."""

    code: str
    fixed: str | None = None
    instead: str | None = None


@dataclass
class Report:
    """One finding of a rule at ``node`` (its first line and column), with an optional fix
    (edits applied together). ``args`` fill the ``{placeholders}`` of the rule's messages in
    every language (the rule's ``message_args`` are the defaults)."""

    node: ast.AST
    edits: list[Edit] = field(default_factory=list)
    args: dict[str, str] = field(default_factory=dict)
    #: A key of the rule's ``variants``: another wording of the message for this finding.
    variant: str | None = None


class Rule:
    """Base class of the rules. Subclasses set the class attributes and `check`."""

    #: Stable code, ``PTT`` and three digits; never reused for another rule.
    code: ClassVar[str]
    #: Short kebab-case name (``torch-load-weights-only``).
    name: ClassVar[str]
    #: ``error`` (correctness, security), ``warning`` (performance), ``info`` (depends on
    #: context).
    severity: ClassVar[Severity]
    #: What is wrong, in one line; ``{name}`` placeholders are filled from a report's ``args``
    #: (``message_args`` gives the values shown where no finding is at hand: docs, SARIF).
    message: ClassVar[str]
    #: The same line in Chinese (terms as in ``tips/_glossary.yaml``), same placeholders.
    message_zh: ClassVar[str]
    message_args: ClassVar[dict[str, str]] = {}
    #: Other wordings of the message for some findings: key -> (English, Chinese).
    variants: ClassVar[dict[str, tuple[str, str]]] = {}
    #: Why the pattern is a problem, in Chinese: the docstring's counterpart.
    why_zh: ClassVar[str]
    #: The id of the tip this rule enforces: ``tips/<tip>.yaml``.
    tip: ClassVar[str]
    #: Whether the rule runs without ``--select``; an opt-in rule (False) runs only when a
    #: selection names it (its code, a prefix of it, or ``ALL``).
    default: ClassVar[bool] = True
    #: Whether the rule can fix some of its findings, and how safely (`Applicability`).
    fixable: ClassVar[bool] = False
    fix_safety: ClassVar[Applicability | None] = None
    #: What the fix does and, for an unsafe one, what it can change (English, Chinese).
    fix_note: ClassVar[str] = ""
    fix_note_zh: ClassVar[str] = ""
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
    def why(cls, lang: str = "en") -> str:
        """Why the pattern is a problem, in ``lang``."""
        return cls.description() if lang == "en" else cls.why_zh.strip()

    @classmethod
    def message_in(
        cls, lang: str = "en", args: dict[str, str] | None = None, variant: str | None = None
    ) -> str:
        """The message in ``lang`` (``en`` or ``zh``), or its ``variant``, with its placeholders
        filled from ``args`` over the defaults of ``message_args``."""
        if variant is not None:
            template = cls.variants[variant][0 if lang == "en" else 1]
        else:
            template = cls.message if lang == "en" else cls.message_zh
        values = cls.message_args | (args or {})
        return template.format(**values) if values else template

    @classmethod
    def invalid_examples(cls) -> list[Invalid]:
        return [i if isinstance(i, Invalid) else Invalid(i) for i in cls.INVALID]


# --- building fixes: edits at the positions the ast module gives ----------------------------


def start_of(node: ast.AST) -> tuple[int, int]:
    line, col, _, _ = span(node)
    return (line, col)


def end_of(node: ast.AST) -> tuple[int, int]:
    _, _, line, col = span(node)
    return (line, col)


def replace(node: ast.AST, text: str) -> Edit:
    """Replace the whole of ``node``."""
    return Edit(start_of(node), end_of(node), text)


def insert(at: tuple[int, int], text: str) -> Edit:
    return Edit(at, at, text)


#: An edit a helper could not place (a region that does not tokenize): the report keeps its
#: finding, without a fix.
UNFIXABLE = Edit((0, 0), (0, 0), "")


def _lines(lines: list[str]) -> Lines:
    return lines if isinstance(lines, Lines) else Lines("\n".join(lines))


def _name_char(ch: str) -> bool:
    """A character the tokenizer reads as part of a name (any non-ASCII one: Python
    normalises and checks the whole name afterwards)."""
    return ch == "_" or ch.isalnum() if ch.isascii() else True


def rename_attribute(node: ast.Attribute, new: str, lines: list[str] | None = None) -> Edit:
    """Replace the last name of ``a.b.old`` with ``new``: the name as written (Python reads
    ``memory_cacheｄ`` as ``memory_cached``: the ``ast`` name is normalised, the source is
    not). Without ``lines`` the name is measured from the ``ast``: only an ASCII name."""
    line, end = end_of(node)
    if lines is None:
        if not node.attr.isascii():
            return UNFIXABLE
        return Edit((line, end - len(node.attr)), (line, end), new)
    text = _lines(lines)
    try:
        stop = text.offset((line, end))
    except IndexError:
        return UNFIXABLE
    source, at = text.source, stop
    while at > 0 and _name_char(source[at - 1]):
        at -= 1
    return UNFIXABLE if at == stop else Edit(text.position(at), (line, end), new)


def _parens(text: Lines, call: ast.Call) -> tuple[int, int] | None:
    """The offsets of the ``(`` and the ``)`` of ``call``."""
    try:
        after, close = text.offset(end_of(call.func)), text.offset(end_of(call)) - 1
    except IndexError:
        return None
    if close < after or text.source[close] != ")":
        return None
    for i, ch in text.punctuation(after, close + 1):
        if ch == "(":
            return i, close
        if ch != ")":  # the closing parentheses of a parenthesised callee only
            return None
    return None


def open_paren(lines: list[str], call: ast.Call) -> tuple[int, int]:
    """The position just after the ``(`` of ``call`` (a ``(`` in a comment between the name
    and the parenthesis does not count)."""
    text = _lines(lines)
    found = _parens(text, call)
    return UNFIXABLE.start if found is None else text.position(found[0] + 1)


def after_last_argument(lines: list[str], call: ast.Call) -> tuple[tuple[int, int], bool]:
    """Where to add an argument to ``call``, and whether it already has arguments: after the
    last argument and the parentheses around it, before a trailing comma."""
    text = _lines(lines)
    found = _parens(text, call)
    if found is None:
        return UNFIXABLE.start, False
    opening, close = found
    args: list[ast.AST] = [*call.args, *call.keywords]
    if not args:
        return text.position(opening + 1), False
    at = text.offset(max(end_of(a) for a in args))
    if at > close:  # a bare generator expression: it shares the call's parentheses
        return UNFIXABLE.start, False
    for i, ch in text.punctuation(at, close):
        if ch == ",":
            break
        if ch != ")":
            return UNFIXABLE.start, False
        at = i + 1
    return text.position(at), True


def argument_start(lines: list[str], call: ast.Call, arg: ast.expr) -> tuple[int, int]:
    """Where the positional argument ``arg`` of ``call`` starts, the parentheses around it
    included (where ``name=`` goes)."""
    text = _lines(lines)
    found = _parens(text, call)
    if found is None or arg not in call.args:
        return UNFIXABLE.start
    k = call.args.index(arg)
    start = found[0] + 1 if k == 0 else text.offset(end_of(call.args[k - 1]))
    at = text.offset(start_of(arg))
    separated, first = k == 0, None
    for i, ch in text.punctuation(start, at):
        if ch == ")" and not separated:
            continue
        if ch == "," and not separated:
            separated = True
        elif ch == "(" and separated:
            first = i if first is None else first
        else:
            return UNFIXABLE.start
    return text.position(at if first is None else first)


def add_keyword(lines: list[str], call: ast.Call, text: str) -> Edit:
    """Append the keyword argument ``text`` (``weights_only=True``) to ``call``. A bare
    generator expression, the only argument, is put in parentheses as well (``f(x for x in
    y)`` shares its parentheses with the call)."""
    args = call.args
    if len(args) == 1 and not call.keywords and isinstance(args[0], ast.GeneratorExp):
        source = _lines(lines)
        found = _parens(source, call)
        if found is None:
            return UNFIXABLE
        opening, close = found
        if source.offset(start_of(args[0])) == opening:  # the call's own parentheses
            inside = source.source[opening + 1 : close]
            return Edit(source.position(opening + 1), source.position(close), f"({inside}), {text}")
    at, has_args = after_last_argument(lines, call)
    return insert(at, f", {text}" if has_args else text)


def remove_method_call(lines: list[str], call: ast.Call) -> Edit:
    """Delete ``.name(...)`` from ``receiver.name(...)``: from the ``.`` (after the closing
    parentheses of a parenthesised receiver) to the end of the call."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return UNFIXABLE
    text = _lines(lines)
    try:
        after, stop = text.offset(end_of(func.value)), text.offset(end_of(func))
    except IndexError:
        return UNFIXABLE
    for i, ch in text.punctuation(after, stop):
        if ch == ".":
            return Edit(text.position(i), end_of(call), "")
        if ch != ")":
            break
    return UNFIXABLE
