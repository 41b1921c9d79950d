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
    """A mistake in the user's input: reported in one line, exit status 2.

    An error of a command that has ``--lang`` names its line's label in
    ``generator/templates/site/ui.yaml`` (``key``: the label ``cli_err_<key>``) and the values of
    its placeholders (``params``; a list is joined as the language joins one): the CLI prints it
    in the language of the run. The English text given is ``str(err)``, the same words.
    """

    exit_code = 2

    def __init__(self, message: str, *, key: str | None = None, **params: object) -> None:
        super().__init__(message)
        self.key = key
        self.params = params


class InvalidRecords(UserError):
    """Records failed validation; carries every problem found (exit status 1)."""

    exit_code = 1

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(problems)
        super().__init__(
            f"{len(self.problems)} problem(s) in the tip records", key="records", n=len(problems)
        )


class NotFound(UserError):
    """A tip id, path or query that matches nothing."""

    exit_code = 1
