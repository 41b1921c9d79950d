"""Problems found in records, and the exceptions the CLI turns into exit codes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """One problem in one file, printed as ``file:line: field.path: reason``."""

    file: str
    line: int
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field}: {self.reason}"


class UserError(Exception):
    """A mistake in the user's input: reported in one line, exit status 2."""

    exit_code = 2


class InvalidRecords(UserError):
    """Records failed validation; carries every problem found (exit status 1)."""

    exit_code = 1

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(problems)
        super().__init__(f"{len(self.problems)} problem(s) in the tip records")


class NotFound(UserError):
    """A tip id, path or query that matches nothing."""

    exit_code = 1
