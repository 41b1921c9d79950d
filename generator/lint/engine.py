"""Find the Python files, read and parse them, choose the rules, run them, apply ``noqa``.

`lint_paths` checks files (``python -m generator lint`` runs it through
`generator.lint.api`); `check_file` checks one text under a file name, and `lint_source`
one string with every default rule (the tests and the examples of each rule use it). A file
that cannot be read or parsed becomes a `FileError` with its position (`generator.lint.files`),
and the other files are still checked. A rule that raises on a file is a bug of the lint:
`check_file` turns it into one ``internal error in PTTnnn`` line for that file (the other
rules' findings are kept, the file is not fixed). A fix is kept only where it compiles
(`generator.lint.edits`). The rules that run come from ``--select``/``--ignore`` and the
``pyproject.toml`` settings (`generator.lint.config`); ``noqa`` comments are read by
`generator.lint.noqa`. Nothing here imports torch or runs the code it checks.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from generator.lint.analysis import Context
from generator.lint.config import NO_CONFIG, ConfigFinder, LintConfig, split_codes
from generator.lint.edits import sound
from generator.lint.files import (
    FileError,
    LintUsageError,
    decode_source,
    discover,
    display_path,
    read_source,
)
from generator.lint.lines import char_column
from generator.lint.noqa import Suppressions, statement_lines, suppressions
from generator.lint.rules import RULES
from generator.lint.rules.base import Edit, Rule
from generator.lint.syntax import span

__all__ = [
    "FileError",
    "Finding",
    "LintResult",
    "LintUsageError",
    "RuleChoice",
    "RuleFailure",
    "char_column",
    "check_file",
    "check_text",
    "check_tree",
    "decode_source",
    "discover",
    "display_path",
    "lint_paths",
    "lint_source",
    "read_source",
    "select_rules",
]


class RuleFailure(Exception):
    """A rule (or the analysis it asked for) raised on a file: a bug of the lint, which
    `check_file` turns into one line naming the rule. ``findings``: those of the other
    rules."""

    def __init__(self, code: str, error: BaseException, findings: list[Finding]) -> None:
        super().__init__(f"{code}: {type(error).__name__}: {error}")
        self.code = code
        self.error = error
        self.findings = findings


@dataclass(frozen=True, order=True)
class Finding:
    """One problem in one file. ``line`` and ``column`` are 1-based, the column counted in
    characters."""

    path: str
    line: int
    column: int
    rule: str
    message: str
    tip: str
    severity: str
    #: Whether ``--fix`` applies its fix (a safe one).
    fixable: bool
    end_line: int = field(default=0, compare=False)
    end_column: int = field(default=0, compare=False)
    edits: tuple[Edit, ...] = field(default=(), compare=False, repr=False)
    #: The applicability of its fix (``safe``, ``unsafe``), None without one.
    fix: str | None = field(default=None, compare=False)

    def as_dict(self) -> dict[str, object]:
        """The keys of the JSON output, in this order."""
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "rule": self.rule,
            "tip": self.tip,
            "message": self.message,
            "severity": self.severity,
            "fixable": self.fixable,
            "fix": self.fix,
        }


@dataclass
class LintResult:
    """Findings and unreadable files of one run, and how many files were checked."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    files: int = 0
    #: The source of each file read, and the rules it was checked with, for ``--fix``.
    sources: dict[str, str] = field(default_factory=dict, repr=False)
    rules: dict[str, tuple[type[Rule], ...]] = field(default_factory=dict, repr=False)

    @property
    def internal(self) -> bool:
        """Whether the lint itself failed on a file (a bug: exit status 3)."""
        return any(e.internal for e in self.errors)


# --- rule selection ---------------------------------------------------------------------------


def known_code(code: str) -> bool:
    """Whether ``code`` is a rule code, a prefix of one, or ``ALL``."""
    return code == "ALL" or any(r.code.startswith(code) for r in RULES)


def _matches(rule: type[Rule], codes: Sequence[str]) -> bool:
    return any(code == "ALL" or rule.code.startswith(code) for code in codes)


def select_rules(
    select: str | Sequence[str] | None = None,
    ignore: str | Sequence[str] | None = None,
    config: LintConfig = NO_CONFIG,
) -> list[type[Rule]]:
    """The rules that run: those ``select`` names by code or prefix (``PTT0``, ``ALL``), or,
    without it, the configured ``select``, or else every default rule; less those ``ignore``
    and the configured ``ignore`` name. Opt-in rules run only when a selection names them.

    Raises:
        LintUsageError: a code or prefix that matches no rule.
    """
    chosen = split_codes(select)
    dropped = split_codes(ignore)
    for code in chosen + dropped:
        if not known_code(code):
            raise LintUsageError("unknown_code", code=code, last=RULES[-1].code)
    if not chosen and config.select is not None:
        chosen = list(config.select)
    dropped += config.ignore
    out = [r for r in RULES if _matches(r, chosen)] if chosen else [r for r in RULES if r.default]
    return [r for r in out if not _matches(r, dropped)]


def parse_tree(source: str, path: str = "<string>") -> ast.Module:
    """``ast.parse`` with its warnings silenced: the checked file's ``SyntaxWarning`` (an
    invalid escape, ``True[0]``) is not the lint's to print, and under ``-W error`` it would
    make a valid file a syntax error.

    Raises:
        SyntaxError, ValueError, RecursionError, MemoryError: as ``ast.parse``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, path)


def parse(source: str, display: str) -> ast.Module | FileError:
    """The tree of ``source``, or the position and message of its syntax error."""
    try:
        return parse_tree(source, display)
    except SyntaxError as err:
        line = err.lineno or 1
        column = err.offset or 1
        return FileError.of(display, line, max(column, 1), "syntax", reason=str(err.msg))
    except (ValueError, RecursionError, MemoryError, OverflowError) as err:
        return FileError.of(display, 1, 1, "parse", reason=str(err))


# --- checking ---------------------------------------------------------------------------------


def _placed(edits: Sequence[Edit]) -> bool:
    """Whether every edit has a place (a fix helper that could not place one says so)."""
    return all(e.start[0] >= 1 and e.end[0] >= 1 for e in edits)


def _fstrings(ctx: Context) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    out = []
    for node in ctx.by_type[ast.JoinedStr]:
        line, col, end_line, end_col = span(node)
        out.append(((line, col), (end_line, end_col)))
    return out


def _findings(ctx: Context, rule: type[Rule], lang: str, noqa: Suppressions) -> Iterable[Finding]:
    lines = ctx.lines
    seen: set[tuple[int, int]] = set()
    for report in rule().check(ctx):
        node = report.node
        line = getattr(node, "lineno", 1)
        text = lines[line - 1] if line - 1 < len(lines) else ""
        col = char_column(text, getattr(node, "col_offset", 0))
        if (line, col) in seen:
            continue
        if noqa.lines and noqa.silences(rule.code, *statement_lines(node, ctx.parents)):
            continue
        seen.add((line, col))
        end_line = getattr(node, "end_lineno", None) or line
        end_text = lines[end_line - 1] if end_line - 1 < len(lines) else ""
        end_col = char_column(end_text, getattr(node, "end_col_offset", None) or 0)
        fix = rule.fix_safety if report.edits and _placed(report.edits) else None
        yield Finding(
            path=ctx.path,
            line=line,
            column=col + 1,
            rule=rule.code,
            message=rule.message_in(lang, report.args, report.variant),
            tip=rule.tip,
            severity=rule.severity,
            fixable=fix == "safe",
            end_line=end_line,
            end_column=end_col + 1,
            edits=tuple(report.edits) if fix else (),
            fix=fix,
        )


def check_tree(
    ctx: Context,
    rules: Sequence[type[Rule]],
    lang: str = "en",
    noqa: Suppressions | None = None,
    compile_check: bool = True,
) -> list[Finding]:
    """Run ``rules`` on an analysed file; messages in ``lang``; ``noqa`` comments applied;
    a fix kept only where it can be placed and (``compile_check``: `--fix` compiles what
    it applies itself) where it compiles (`generator.lint.edits.sound`); sorted by position.

    Raises:
        RuleFailure: a rule raised (after the other rules ran).
    """
    out: set[Finding] = set()
    noqa = suppressions(ctx.source) if noqa is None else noqa
    failure: tuple[str, BaseException] | None = None
    for rule in rules:
        if noqa.file_silences(rule.code):
            continue
        try:
            out.update(_findings(ctx, rule, lang, noqa))
        except Exception as err:  # a bug of one rule: the others still run
            failure = failure or (rule.code, err)
    found = sorted(out)
    if any(f.edits for f in found):
        found = sound(ctx.source, ctx.lines, found, _fstrings(ctx), ctx.path, compile_check)
    if failure is not None:
        raise RuleFailure(failure[0], failure[1], found)
    return found


def lint_source(
    source: str,
    path: str = "<string>",
    rules: Sequence[type[Rule]] | None = None,
    lang: str = "en",
    compile_check: bool = True,
) -> list[Finding]:
    """Check one string of Python source (default: with every default rule); with
    ``compile_check``, a fix is kept only where it compiles.

    Raises:
        SyntaxError: ``source`` does not parse.
        RuleFailure: a rule raised.
    """
    tree = parse_tree(source, path)
    chosen = [r for r in RULES if r.default] if rules is None else rules
    return check_tree(Context(tree, source, path), chosen, lang, compile_check=compile_check)


def internal_error(display: str, err: BaseException) -> FileError:
    """The line of an error of the lint itself on the file ``display``."""
    code = err.code if isinstance(err, RuleFailure) else "lint"
    cause = err.error if isinstance(err, RuleFailure) else err
    reason = f"{type(cause).__name__}: {cause}".rstrip(": ")
    return FileError.of(display, 1, 1, "internal", internal=True, rule=code, reason=reason)


class RuleChoice:
    """The rules each file is checked with: those of ``select``/``ignore`` and of the
    ``pyproject.toml`` that applies to the file (``config``: this one for every file;
    ``isolated``: none), chosen once per distinct setting.

    Raises:
        LintUsageError: an unknown rule code in ``select`` or ``ignore``.
        LintConfigError: a ``config`` file that cannot be used.
    """

    def __init__(
        self,
        select: str | Sequence[str] | None = None,
        ignore: str | Sequence[str] | None = None,
        config: str | Path | None = None,
        isolated: bool = False,
    ) -> None:
        select_rules(select, ignore)  # a bad code on the command line fails before any file
        self.select = select
        self.ignore = ignore
        self.finder = (
            None if isolated else ConfigFinder(known_code, Path(config) if config else None)
        )
        self._chosen: dict[tuple[LintConfig, tuple[str, ...]], tuple[type[Rule], ...]] = {}

    def for_file(self, path: Path) -> tuple[type[Rule], ...]:
        """The rules for the file at ``path`` (which need not exist: only its folder's
        ``pyproject.toml`` files are read).

        Raises:
            LintConfigError: the configuration that applies cannot be used.
        """
        settings = self.finder.for_file(path) if self.finder is not None else NO_CONFIG
        key = (settings, settings.ignored_for(path))
        if key not in self._chosen:
            ignored = [*split_codes(self.ignore), *key[1]]
            self._chosen[key] = tuple(select_rules(self.select, ignored, settings))
        return self._chosen[key]


def check_file(
    source: str, display: str, rules: Sequence[type[Rule]], lang: str = "en"
) -> tuple[list[Finding], FileError | None]:
    """The findings of ``rules`` in ``source`` (shown as the file ``display``) and what went
    wrong: a syntax error (no findings), or an error of the lint itself (the findings of the
    rules that ran). Never raises for the file's content."""
    try:
        tree = parse(source, display)
        if isinstance(tree, FileError):
            return [], tree
        return check_tree(Context(tree, source, display), rules, lang), None
    except RuleFailure as err:
        return err.findings, internal_error(display, err)
    except Exception as err:  # the analysis of the file failed: a bug of the lint
        return [], internal_error(display, err)


def check_text(
    source: str, display: str, rules: Sequence[type[Rule]], lang: str = "en"
) -> list[Finding] | FileError:
    """The findings of ``rules`` in ``source`` (shown as the file ``display``), or where it
    does not parse (or where the lint failed on it)."""
    found, error = check_file(source, display, rules, lang)
    return error if error is not None else found


def lint_paths(
    paths: Iterable[str | Path],
    select: str | Sequence[str] | None = None,
    ignore: str | Sequence[str] | None = None,
    lang: str = "en",
    config: str | Path | None = None,
    isolated: bool = False,
) -> LintResult:
    """Check every file under ``paths``: the rules of ``select``/``ignore`` and of the
    ``pyproject.toml`` that applies to each file (``config``: this one for every file;
    ``isolated``: none), messages in ``lang``.

    Raises:
        LintUsageError: a path that does not exist, or an unknown rule code.
        LintConfigError: a configuration that cannot be used.
    """
    choice = RuleChoice(select, ignore, config, isolated)
    found = discover(paths)
    result = LintResult(files=len(found.files), errors=list(found.skipped))
    for path in found.files:
        display = display_path(path)
        rules = choice.for_file(path)
        try:
            source = read_source(path, display)
        except Exception as err:  # pragma: no cover - reading is total; a bug if not
            result.errors.append(internal_error(display, err))
            continue
        if isinstance(source, FileError):
            result.errors.append(source)
            continue
        findings, error = check_file(source, display, rules, lang)
        result.findings.extend(findings)
        if error is not None:
            result.errors.append(error)
            continue
        result.sources[display] = source
        result.rules[display] = rules
    return result
