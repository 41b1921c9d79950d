"""The lint as a library: what ``python -m generator lint``, the site's lint playground
(`generator.lint.browser`) and an editor's language server call.

* `run` checks files and folders, as the command does: lint, then (``fix``) write the fixes
  and lint again, or (``diff``) compute the fixes and write nothing;
* `run_source` checks one text held in memory (an editor's unsaved buffer, a pasted
  script) under a file name of its choosing, with the same steps: its fixes are applied to
  the returned text, never to a file.

Both answer a `LintRun`; `generator.lint.report` renders it as the command's output. Standard
library only, like the rest of the lint (the playground runs it under Pyodide).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from generator.lint.engine import (
    FileError,
    LintResult,
    RuleChoice,
    check_file,
    lint_paths,
    select_rules,
)
from generator.lint.fix import Fixed, fix_files, write_atomic
from generator.lint.lines import LINE_END
from generator.lint.rules import RULES
from generator.lint.rules.base import Rule

__all__ = ["EXIT_CODES", "LintRun", "SourceRun", "possible_rules", "run", "run_source"]

#: The exit status when the lint itself failed on a file: a bug, never a finding.
INTERNAL_ERROR = 3
#: The exit statuses of ``python -m generator lint`` (and their ``lint_exit_<n>`` texts).
EXIT_CODES = (0, 1, 2, INTERNAL_ERROR)


@dataclass
class LintRun:
    """What one run found and fixed.

    Attributes:
        result: the findings and the files that could not be checked; after ``fix``, those
            of the fixed text (what is left), otherwise those of the text as it was.
        changes: each file's fixes (``fix``: applied; ``diff``: only computed).
        fixed: how many findings the applied fixes resolved (0 without ``fix``, and with
            ``diff``, which applies nothing).
        diff: whether the fixes were only computed, to be shown as a diff.
        unsafe: whether unsafe fixes were applied or computed too (``--unsafe-fixes``).
        lang: the language of the messages (``en``, ``zh``).
        rules: every rule that can report in this run: the selection, opt-in rules included
            (the rules a SARIF log describes).
    """

    result: LintResult
    changes: list[Fixed] = field(default_factory=list)
    fixed: int = 0
    diff: bool = False
    unsafe: bool = False
    lang: str = "en"
    rules: tuple[type[Rule], ...] = ()

    @property
    def fixable(self) -> int:
        """How many findings the fixes in `changes` resolve (``--diff``'s "would fix")."""
        return sum(c.fixed for c in self.changes)

    def diff_text(self) -> str:
        """The fixes as one unified diff, file after file (``--diff``'s output)."""
        return "".join(c.diff() for c in self.changes)

    @property
    def exit_code(self) -> int:
        """The command's exit status (`EXIT_CODES`): 3 when the lint itself failed on a file
        (a bug), else 1 for a file that could not be checked, and for findings (with
        ``diff``: for fixes to apply), else 0."""
        if self.result.internal:
            return INTERNAL_ERROR
        if self.diff:
            return 1 if self.changes or self.result.errors else 0
        return 1 if self.result.findings or self.result.errors else 0


@dataclass
class SourceRun(LintRun):
    """A `LintRun` of one text (`run_source`): ``source`` as given, ``text`` after the fixes
    (with ``fix`` or ``diff``; the source itself when none applies or none was asked for)."""

    path: str = "<string>"
    source: str = ""
    text: str = ""


def possible_rules(
    select: str | Sequence[str] | None = None, ignore: str | Sequence[str] | None = None
) -> tuple[type[Rule], ...]:
    """Every rule that can report under ``select``/``ignore``, whatever a ``pyproject.toml``
    selects: the selection (every rule without one), opt-in rules included."""
    chosen = select_rules(select or "ALL", ignore)
    return tuple(r for r in RULES if r in chosen or r.default)


def run(
    paths: str | Path | Iterable[str | Path],
    *,
    select: str | Sequence[str] | None = None,
    ignore: str | Sequence[str] | None = None,
    fix: bool = False,
    diff: bool = False,
    unsafe: bool = False,
    lang: str = "en",
    config: str | Path | None = None,
    isolated: bool = False,
) -> LintRun:
    """Check the files under ``paths`` (one path, or several) as ``python -m generator lint``
    does.

    ``select``/``ignore``: rule codes or prefixes (comma-separated text or a list), which
    replace the configured ``select`` and add to the configured ``ignore``; ``config``: the
    ``pyproject.toml`` for every file (default: the nearest one above each file);
    ``isolated``: no configuration at all. ``fix`` writes the safe fixes (``unsafe``: the
    unsafe ones too) to the files, atomically, and lints them again; ``diff`` computes the
    same fixes and writes nothing (it wins over ``fix``). Messages in ``lang``.

    Raises:
        LintUsageError: a path that does not exist, or an unknown rule code.
        LintConfigError: a configuration that cannot be used.
    """
    paths = [paths] if isinstance(paths, str | Path) else list(paths)

    def lint() -> LintResult:
        return lint_paths(paths, select, ignore, lang, config, isolated)

    out = LintRun(lint(), diff=diff, unsafe=unsafe, lang=lang, rules=possible_rules(select, ignore))
    if not (fix or diff):
        return out
    found = out.result.findings
    out.changes = fix_files(out.result.sources, out.result.rules, unsafe=unsafe, findings=found)
    if diff:
        return out
    unwritten = []
    for change in list(out.changes):
        try:
            write_atomic(Path(change.path), change.after)
        except (OSError, ValueError) as err:
            reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            unwritten.append(FileError.of(change.path, 1, 1, "write", reason=reason))
            out.changes.remove(change)
    out.fixed = out.fixable
    if out.changes:  # what is left
        out.result = lint()
    out.result.errors += unwritten
    return out


def run_source(
    source: str,
    filename: str = "<string>",
    *,
    select: str | Sequence[str] | None = None,
    ignore: str | Sequence[str] | None = None,
    fix: bool = False,
    diff: bool = False,
    unsafe: bool = False,
    lang: str = "en",
    config: str | Path | None = None,
    root: str | Path | None = None,
    isolated: bool = False,
) -> SourceRun:
    """Check ``source``, the text of the file ``filename``, held in memory: the file is
    neither read nor written, whether it exists or not.

    ``filename`` is the path the findings show; with ``root`` (a project's folder) a
    relative ``filename`` lies below it, else below the working directory. The settings
    are those `run` would use for that file (the nearest ``pyproject.toml`` above it, the
    one of ``config``, or none when ``isolated``), and so are the other options, except
    that ``fix`` applies the fixes to `SourceRun.text` (then lints that text again) and
    ``diff`` computes the same text and the diff without applying anything.

    Raises:
        LintUsageError: an unknown rule code.
        LintConfigError: a configuration that cannot be used.
    """
    rules = RuleChoice(select, ignore, config, isolated).for_file(
        Path(root, filename) if root is not None else Path(filename)
    )
    text = source.removeprefix("\ufeff")
    out = SourceRun(
        LintResult(files=1),
        diff=diff,
        unsafe=unsafe,
        lang=lang,
        rules=possible_rules(select, ignore),
        path=filename,
        source=source,
        text=text,
    )
    error = _unencodable(text, filename)
    found, error = ([], error) if error else check_file(text, filename, rules, lang)
    out.result.findings = found
    if error is not None:
        out.result.errors.append(error)
        return out
    out.result.sources[filename] = text
    out.result.rules[filename] = rules
    if not (fix or diff):
        return out
    out.changes = fix_files(out.result.sources, rules, unsafe=unsafe, findings=found)
    if out.changes:
        out.text = out.changes[0].after
    if diff:
        return out
    out.fixed = out.fixable
    if out.changes:  # what is left
        left, error = check_file(out.text, filename, rules, lang)
        out.result.findings, out.result.sources[filename] = left, out.text
        out.result.errors += [error] if error is not None else []
    return out


def _unencodable(text: str, display: str) -> FileError | None:
    """Where ``text`` holds a character that no file can (a lone surrogate, as a browser or
    an editor may pass on), as the error a file with that byte would give."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        ends = [m.end() for m in LINE_END.finditer(text, 0, err.start)]
        line, column = len(ends) + 1, err.start - (ends[-1] if ends else 0) + 1
        char = f"U+{ord(text[err.start]):04X}"
        return FileError.of(display, line, column, "encode", char=char)
    return None
