"""The lint's own lines (errors, the summary's words) in English or Chinese.

The texts live in ``generator/templates/site/ui.yaml`` with every other user-facing string
(``lint_err_<key>``), never in the code: an error is a `Message` (a key and its arguments),
rendered in the language of the run when it is printed. `LintError` is an exception that
carries one (``str()`` gives the English line). Arguments may be messages themselves (the
reason inside a configuration error).

The labels are read once per process, only when a line is rendered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

from generator.errors import UserError

#: The arguments of a message: text, numbers or other messages.
Arg: TypeAlias = "str | int | Message"


def labels_for(lang: str = "en", labels: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """``labels``, or the UI labels of ``lang`` read from ``ui.yaml``."""
    if labels is not None:
        return labels
    from generator.records.ui import labels as ui_labels

    return ui_labels()[lang]


@dataclass(frozen=True)
class Message:
    """One line of the lint, by its key in ``ui.yaml`` (``lint_err_<key>``) and arguments."""

    key: str
    args: tuple[tuple[str, Arg], ...] = ()

    @classmethod
    def of(cls, key: str, /, **args: Arg) -> Message:
        return cls(key, tuple(args.items()))

    def text(self, lang: str = "en", labels: Mapping[str, str] | None = None) -> str:
        """The line in ``lang`` (or with these ``labels``)."""
        L = labels_for(lang, labels)
        values = {
            name: value.text(lang, L) if isinstance(value, Message) else value
            for name, value in self.args
        }
        return L[f"lint_err_{self.key}"].format(**values)

    def __str__(self) -> str:
        return self.text("en")


class LintError(UserError):
    """A usage or configuration error of the lint, as a `Message` (exit status 2)."""

    def __init__(self, message: Message | str, /, **args: Arg) -> None:
        self.message = message if isinstance(message, Message) else Message.of(message, **args)
        super().__init__(self.message.key)

    def __str__(self) -> str:
        return self.message.text("en")

    def text(self, lang: str = "en") -> str:
        return self.message.text(lang)
