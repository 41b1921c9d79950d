"""The types the composer's options are made of: `Option`, the `Feature` an option applies,
the `Conflict` that refuses a combination, and the errors a request can raise. The options
themselves are data, in `generator.compose.catalog`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from generator.errors import UserError


def labels(lang: str) -> dict[str, str]:
    """The site's UI labels in ``lang`` (generator/templates/site/ui.yaml), which hold the
    composer's generated messages (``compose_err_*``) in both languages."""
    from generator.records.ui import labels as ui_labels

    return ui_labels()[lang]


#: The workloads the composer writes, and the model a bare ``compose`` writes.
MODELS = ("convnet", "gpt")


class ComposeError(UserError):
    """A composer request that cannot be honoured (exit status 2, nothing written).

    ``str(error)`` is the English line the command prints; the site's Chinese composer page
    shows ``error.in_lang("zh")``, the same message in Chinese where the composer has one.
    """

    def __init__(self, message: str, zh: str | None = None) -> None:
        super().__init__(message)
        self.zh = zh

    def in_lang(self, lang: str) -> str:
        """The message in ``lang`` (``en`` or ``zh``): English where no translation exists."""
        return self.zh if lang == "zh" and self.zh else str(self)


class ContradictoryOptions(ComposeError):
    """Composer flags that contradict each other or are out of range."""


class OutputExists(ComposeError):
    """``-o PATH`` names an existing file and ``--force`` was not given."""


@dataclass(frozen=True)
class Feature:
    """A composer feature (a key of `COMPOSE_FEATURES`) that an option applies when it is
    on and `when` holds: the script cites the tips whose record declares the feature."""

    name: str
    when: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Option:
    """One composer option.

    Attributes:
        name: the `ComposeOptions` field; the flag is ``--`` and the name with hyphens.
        kind: ``flag`` (on or off), ``int``, ``float`` or ``choice``.
        default: the value that leaves the feature out.
        help: what the option makes the script do, by language (``en``, ``zh``), in
            Markdown: the composer page's flag tables and ``--help`` (code spans unquoted).
        group: ``model``, ``features`` or ``target`` (the sections of ``--help``).
        metavar: the value's name in ``--help`` (``N``, ``X``).
        choices: the values of a ``choice``.
        const: the value of a ``choice`` given without one (``--activation-checkpointing``).
        models: the models the option applies to; with another it is refused.
        features: the features it applies.
        minimum, maximum, exclusive_minimum, exclusive_maximum: the range of a number.
    """

    name: str
    kind: str
    default: Any
    help: Mapping[str, str]
    group: str = "features"
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    const: str | None = None
    models: tuple[str, ...] = MODELS
    features: tuple[Feature, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None

    @property
    def flag(self) -> str:
        """The command-line flag, ``--clip-grad-norm`` for ``clip_grad_norm``."""
        return "--" + self.name.replace("_", "-")

    def on(self, value: Any) -> bool:
        """Whether ``value`` turns the option on."""
        return value != self.default

    def usage(self) -> str:
        """The flag as ``--help`` shows it: ``--accum N``, ``--device {auto,cpu,cuda}``."""
        if self.kind == "choice":
            values = "{" + ",".join(self.choices) + "}"
            return f"{self.flag} [{values}]" if self.const else f"{self.flag} {values}"
        return f"{self.flag} {self.metavar}" if self.metavar else self.flag

    def range_error(self, value: Any, lang: str = "en") -> str | None:
        """What is wrong with a number out of range, in ``lang`` (the phrases are the
        ``compose_err_*`` labels of ui.yaml); None if it is in range."""
        if self.kind not in ("int", "float") or value == self.default:
            return None
        lo, hi = self.minimum, self.maximum
        xlo, xhi = self.exclusive_minimum, self.exclusive_maximum
        ok = (
            math.isfinite(value)
            and (lo is None or value >= lo)
            and (hi is None or value <= hi)
            and (xlo is None or value > xlo)
            and (xhi is None or value < xhi)
        )
        if ok:
            return None
        L = labels(lang)
        if xhi is not None or hi is not None:
            low = f"[{_num(lo)}" if lo is not None else f"({_num(xlo)}"
            high = f"{_num(hi)}]" if hi is not None else f"{_num(xhi)})"
            wanted = L["compose_err_in"].format(interval=f"{low}, {high}")
        elif xlo == 0:
            wanted = L["compose_err_positive"]
        elif lo == 0:
            wanted = L["compose_err_nonnegative"]
        else:
            wanted = L["compose_err_at_least"].format(low=_num(lo))
        return L["compose_err_range"].format(flag=self.flag, wanted=wanted, value=_num(value))


@dataclass(frozen=True)
class Conflict:
    """Option values the composer refuses together, with the one-line reason."""

    when: Mapping[str, Any]
    message: str
    #: The message in Chinese, for the site's Chinese composer page (the CLI prints ``message``).
    zh: str = ""


def _num(value: Any) -> str:
    """A number as a message shows it: 1, not 1.0."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)
    return str(value)
