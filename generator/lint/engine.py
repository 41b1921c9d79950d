"""Find the Python files, read and parse them, choose the rules, run them, apply ``noqa``.

`lint_paths` checks files (``python -m generator lint`` runs it through
`generator.lint.api`); `check_text` checks one text under a file name, and `lint_source`
one string with every default rule (the tests and the examples of each rule use it). A file that cannot be read or
parsed becomes a `FileError` with its position, and the other files are still
checked. The rules that run come from ``--select``/``--ignore`` and the ``pyproject.toml``
settings (`generator.lint.config`); ``noqa`` comments are read by `generator.lint.noqa`.
Standard library only: nothing here imports torch, pydantic or YAML.
"""

from __future__ import annotations

import ast
import io
import os
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from generator.errors import UserError
from generator.lint.analysis import Context
from generator.lint.config import NO_CONFIG, ConfigFinder, LintConfig, split_codes
from generator.lint.noqa import Suppressions, statement_lines, suppressions
from generator.lint.rules import RULES
from generator.lint.rules.base import Edit, Rule

#: Folders never searched: virtual environments and caches by name (hidden folders, and
#: any folder holding a ``pyvenv.cfg`` or ``conda-meta``, are skipped as well).
SKIP_DIRS = frozenset({"__pycache__", "site-packages", "node_modules", "venv", "env"})

#: Bytes of a file looked at to tell binary files from source.
_SNIFF = 8192


class LintUsageError(UserError):
    """A bad ``--select``/``--ignore`` code or a path that does not exist (exit status 2)."""


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


@dataclass(frozen=True, order=True)
class FileError:
    """A file that could not be checked, and where it went wrong."""

    path: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.message}"


@dataclass
class LintResult:
    """Findings and unreadable files of one run, and how many files were checked."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    files: int = 0
    #: The source of each file read, and the rules it was checked with, for ``--fix``.
    sources: dict[str, str] = field(default_factory=dict, repr=False)
    rules: dict[str, tuple[type[Rule], ...]] = field(default_factory=dict, repr=False)


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
            raise LintUsageError(
                f"unknown rule code {code!r} (codes run from PTT001 to {RULES[-1].code})"
            )
    if not chosen and config.select is not None:
        chosen = list(config.select)
    dropped += config.ignore
    out = [r for r in RULES if _matches(r, chosen)] if chosen else [r for r in RULES if r.default]
    return [r for r in out if not _matches(r, dropped)]


# --- files ------------------------------------------------------------------------------------


def discover(paths: Iterable[str | Path]) -> list[Path]:
    """The files to check: each file given, and every ``*.py`` under each folder given
    (sorted, skipping hidden folders and virtual environments).

    Raises:
        LintUsageError: a path that does not exist.
    """
    out: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = _walk(path)
        elif path.exists():
            found = [path]
        else:
            raise LintUsageError(f"{raw}: no such file or directory")
        for p in found:
            key = p.resolve()
            if key not in seen:
                seen.add(key)
                out.append(p)
    return out


def _walk(folder: Path) -> list[Path]:
    out: list[Path] = []
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name.startswith(".") or entry.name in SKIP_DIRS:
                    continue
                if os.path.exists(os.path.join(entry.path, "pyvenv.cfg")) or os.path.isdir(
                    os.path.join(entry.path, "conda-meta")
                ):
                    continue
                subdirs.append(Path(entry.path))
            elif entry.name.endswith(".py") and entry.is_file():
                out.append(Path(entry.path))
        stack.extend(reversed(subdirs))
    return out


def read_source(path: Path, display: str) -> str | FileError:
    """The text of ``path``, or why it cannot be read (binary, not UTF-8 or its declared
    encoding, an OS error)."""
    try:
        data = path.read_bytes()
    except OSError as err:
        return FileError(display, 1, 1, f"cannot read the file: {err.strerror or err}")
    return decode_source(data, display)


def decode_source(data: bytes, display: str) -> str | FileError:
    if b"\0" in data[:_SNIFF]:
        return FileError(display, 1, 1, "binary file (contains NUL bytes), not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        if "unknown encoding" in str(err):
            return FileError(display, 1, 1, f"cannot decode: {err}")
        encoding = "utf-8"  # invalid UTF-8 in the first lines: the decode below says where
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        return FileError(
            display,
            line,
            column,
            f"not valid {encoding}: byte 0x{data[err.start]:02x} cannot be decoded",
        )
    return text.removeprefix("\ufeff")


def parse(source: str, display: str) -> ast.Module | FileError:
    """The tree of ``source``, or the position and message of its syntax error."""
    try:
        return ast.parse(source, display)
    except SyntaxError as err:
        line = err.lineno or 1
        column = err.offset or 1
        return FileError(display, line, max(column, 1), f"syntax error: {err.msg}")
    except (ValueError, RecursionError, MemoryError) as err:
        return FileError(display, 1, 1, f"cannot parse: {err}")


# --- checking ---------------------------------------------------------------------------------


def char_column(line: str, byte_col: int) -> int:
    """A 0-based character column from the ``ast`` module's UTF-8 byte column."""
    if line.isascii():
        return byte_col
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def check_tree(
    ctx: Context,
    rules: Sequence[type[Rule]],
    lang: str = "en",
    noqa: Suppressions | None = None,
) -> list[Finding]:
    """Run ``rules`` on an analysed file; messages in ``lang``; ``noqa`` comments applied;
    sorted by position."""
    out: set[Finding] = set()
    lines = ctx.lines
    noqa = suppressions(ctx.source) if noqa is None else noqa
    for rule in rules:
        if noqa.file_silences(rule.code):
            continue
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
            fix = rule.fix_safety if report.edits else None
            out.add(
                Finding(
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
            )
    return sorted(out)


def lint_source(
    source: str,
    path: str = "<string>",
    rules: Sequence[type[Rule]] | None = None,
    lang: str = "en",
) -> list[Finding]:
    """Check one string of Python source (default: with every default rule).

    Raises:
        SyntaxError: ``source`` does not parse.
    """
    tree = ast.parse(source, path)
    chosen = [r for r in RULES if r.default] if rules is None else rules
    return check_tree(Context(tree, source, path), chosen, lang)


def display_path(path: Path) -> str:
    """``path`` relative to the working directory where it lies below it, else as given."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


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


def check_text(
    source: str, display: str, rules: Sequence[type[Rule]], lang: str = "en"
) -> list[Finding] | FileError:
    """The findings of ``rules`` in ``source`` (shown as the file ``display``), or where it
    does not parse."""
    tree = parse(source, display)
    if isinstance(tree, FileError):
        return tree
    return check_tree(Context(tree, source, display), rules, lang)


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
    files = discover(paths)
    result = LintResult(files=len(files))
    for path in files:
        display = display_path(path) if path.is_absolute() else str(path)
        rules = choice.for_file(path)
        source = read_source(path, display)
        if isinstance(source, FileError):
            result.errors.append(source)
            continue
        found = check_text(source, display, rules, lang)
        if isinstance(found, FileError):
            result.errors.append(found)
            continue
        result.sources[display] = source
        result.rules[display] = rules
        result.findings.extend(found)
    return result
