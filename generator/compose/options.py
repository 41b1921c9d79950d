"""The composer's choices: `ComposeOptions` (a field per option of
`generator.compose.catalog.OPTIONS`, declared in the module `option_fields` that
`generator.compose.codegen` writes from the catalog), `validate`, which refuses contradictory ones before
anything is written, and `options_schema`, the JSON that the browser composer builds its
form from before it runs this same code. Nothing here imports more than the standard
library.

An option is *on* when its value differs from its default (the default leaves the feature
out of the script). A condition (`Feature.when`, `Conflict.when`) maps option names to
``True`` (the option is on), ``False`` (it is off) or a value it must equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from generator.compose.catalog import CONFLICTS, CORE_FEATURES, OPTIONS
from generator.compose.option_fields import OptionFields
from generator.compose.option_types import (
    MODELS,
    ComposeError,
    Conflict,
    ContradictoryOptions,
    Feature,
    Option,
    OutputExists,
    labels,
)
from generator.records.taxonomy import COMPOSE_FEATURES

__all__ = [
    "BY_NAME",
    "CONFLICTS",
    "CORE_FEATURES",
    "MODELS",
    "OPTIONS",
    "ComposeError",
    "ComposeOptions",
    "Conflict",
    "ContradictoryOptions",
    "Feature",
    "Option",
    "OutputExists",
    "model_conflicts",
    "options_schema",
    "validate",
]

BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}


def model_conflicts() -> list[Conflict]:
    """An option refused with each model outside its `Option.models`."""
    out = []
    for option in OPTIONS:
        for model in MODELS:
            if model not in option.models:
                en, zh = (
                    labels(lang)["compose_err_model_only"].format(
                        flag=option.flag, models=labels(lang)["compose_err_or"].join(option.models)
                    )
                    for lang in ("en", "zh")
                )
                out.append(Conflict({"model": model, option.name: True}, en, zh))
    return out


@dataclass(frozen=True)
class ComposeOptions(OptionFields):
    """The composer's choices, one field per option of `OPTIONS` (``clip_grad_norm`` for
    ``--clip-grad-norm``; the fields are `OptionFields`'). The defaults compose the plain
    conv-net script."""

    def on(self, name: str) -> bool:
        """Whether option ``name`` is on (differs from its default)."""
        return BY_NAME[name].on(getattr(self, name))

    def holds(self, when: Mapping[str, Any]) -> bool:
        """Whether the condition ``when`` holds for these options."""
        for name, wanted in when.items():
            if isinstance(wanted, bool):
                if self.on(name) != wanted:
                    return False
            elif getattr(self, name) != wanted:
                return False
        return True

    def features(self) -> list[str]:
        """The features these options apply, ``always`` first, in `COMPOSE_FEATURES` order."""
        chosen = {"always"}
        for option in OPTIONS:
            if self.on(option.name):
                chosen |= {f.name for f in option.features if self.holds(f.when)}
        return [f for f in COMPOSE_FEATURES if f in chosen]

    def flags(self) -> list[str]:
        """The composer flags that produce these options, in `OPTIONS` order."""
        out: list[str] = []
        for option in OPTIONS:
            value = getattr(self, option.name)
            if not option.on(value):
                continue
            if option.kind == "flag" or (option.const is not None and value == option.const):
                out.append(option.flag)
            else:
                out += [option.flag, repr(value) if isinstance(value, float) else str(value)]
        return out

    def command(self) -> str:
        """The command line that regenerates this script (without ``-o``)."""
        return " ".join(["python -m generator compose", *self.flags()])

    @property
    def dtype(self) -> str:
        """The autocast dtype choice (``auto``, ``bf16`` or ``fp16``)."""
        return self.amp_dtype or "auto"

    @property
    def gpt(self) -> bool:
        """Whether the script is the GPT workload."""
        return self.model == "gpt"


def validate(options: ComposeOptions) -> None:
    """Reject out-of-range values and contradictory choices.

    Raises:
        ContradictoryOptions: with a one-line message naming the flags involved.
    """
    for option in OPTIONS:
        value = getattr(options, option.name)
        if option.kind == "choice" and value != option.default and value not in option.choices:
            en, zh = (
                labels(lang)["compose_err_choice"].format(
                    flag=option.flag, choices=", ".join(option.choices), value=value
                )
                for lang in ("en", "zh")
            )
            raise ContradictoryOptions(en, zh)
        error = option.range_error(value)
        if error:
            raise ContradictoryOptions(error, option.range_error(value, "zh"))
    for conflict in (*model_conflicts(), *CONFLICTS):
        if options.holds(conflict.when):
            raise ContradictoryOptions(conflict.message, conflict.zh or None)


def options_schema() -> dict[str, Any]:
    """The options and conflicts as JSON-able data, for the browser composer's form.

    ``{"models": [...], "default_model": ..., "options": [...], "conflicts": [...]}``: each
    option with its ``name``, ``flag``, ``kind``, ``default``, ``help`` (``en``, ``zh``),
    ``group``, ``metavar``, ``choices``, ``const``, ``models``, ``features``
    (``[{"name", "when"}]``), the range bounds that apply, and ``usage``; each conflict with
    its condition ``when`` (option name -> true for on, false for off, or the value it equals)
    and its ``message``, the line the composer exits with. Model conflicts come first, as
    `validate` checks them.
    """
    options = []
    for option in OPTIONS:
        entry: dict[str, Any] = {"flag": option.flag, "usage": option.usage()}
        for f in fields(Option):
            value = getattr(option, f.name)
            if f.name == "features":
                value = [{"name": x.name, "when": dict(x.when)} for x in value]
            elif f.name == "help":
                value = dict(value)
            elif isinstance(value, tuple):
                value = list(value)
            if value is not None or f.name == "default":
                entry[f.name] = value
        options.append(entry)
    conflicts = [
        {"when": dict(c.when), "message": c.message} for c in (*model_conflicts(), *CONFLICTS)
    ]
    return {
        "models": list(MODELS),
        "default_model": BY_NAME["model"].default,
        "options": options,
        "conflicts": conflicts,
    }
