"""The ``compose`` subcommand's flags, made from `generator.compose.catalog.OPTIONS`:
`add_arguments` adds them to a parser (their help names the tips each applies),
`options_from_args` turns the parsed flags into a validated
`generator.compose.options.ComposeOptions`."""

from __future__ import annotations

import argparse
import re
import textwrap
from typing import Any, NoReturn

from generator.compose.option_types import labels
from generator.compose.options import (
    OPTIONS,
    ComposeError,
    ComposeOptions,
    Option,
    validate,
)
from generator.compose.tips import read_tips_by_feature

_ALWAYS_TIPS = "<always-tips>"
_CODE_SPAN = re.compile(r"`([^`]+)`")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")

#: The features each option's flag applies, by the flag's ``dest`` (its option's name): the
#: tips its ``--help`` and the browser form's control name.
FEATURES: dict[str, list[str]] = {o.name: sorted({f.name for f in o.features}) for o in OPTIONS}

_GROUPS = {
    "model": "workload",
    "features": "features (each applies the tips named in brackets)",
    "target": "target and output",
}


def plain(markdown: str) -> str:
    """Help text without Markdown: code spans unquoted, links reduced to their text."""
    return _LINK.sub(r"\1", _CODE_SPAN.sub(r"\1", markdown))


class _TipHelpFormatter(argparse.HelpFormatter):
    """Adds the tips each flag applies to its help, reading the records only for --help."""

    _by_feature: dict[str, list[str]] | None = None

    @classmethod
    def _tips(cls, features: list[str]) -> str:
        if cls._by_feature is None:
            cls._by_feature = read_tips_by_feature()
        ids = [i for f in features for i in cls._by_feature.get(f, [])]
        return f"[tip: {', '.join(ids)}]" if ids else "[no tip yet]"

    def _expand_help(self, action: argparse.Action) -> str:
        text = super()._expand_help(action)
        features = FEATURES.get(action.dest)
        return text if not features else f"{text} {self._tips(features)}"

    def _format_text(self, text: str) -> str:
        if _ALWAYS_TIPS in text:
            text = text.replace(_ALWAYS_TIPS, self._tips(["always"]))
        return super()._format_text(text)

    # Tip ids are hyphenated: wrap lines between words only, never inside an id.
    def _split_lines(self, text: str, width: int) -> list[str]:
        text = " ".join(text.split())
        return textwrap.wrap(text, width, break_on_hyphens=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        text = " ".join(text.split())
        return textwrap.fill(
            text, width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
        )


def _add(group: argparse._ArgumentGroup, option: Option) -> None:
    help_ = plain(option.help["en"]).replace("%", "%%")
    if option.models != ("convnet", "gpt"):
        help_ += f" ({' or '.join(option.models)} only)"
    kwargs: dict[str, Any] = {"help": help_, "dest": option.name}
    if option.kind == "flag":
        kwargs["action"] = "store_true"
    elif option.kind == "choice":
        kwargs["choices"] = option.choices
        if option.const is not None:
            kwargs.update(nargs="?", const=option.const)
        if option.default is not None:
            kwargs["default"] = option.default
            kwargs["help"] += f" (default: {option.default})"
    else:
        kwargs.update(type=int if option.kind == "int" else float, metavar=option.metavar)
    group.add_argument(option.flag, **kwargs)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the composer's flags to ``parser`` (the ``compose`` subcommand), one per option."""
    parser.formatter_class = _TipHelpFormatter
    groups = {key: parser.add_argument_group(title) for key, title in _GROUPS.items()}
    for option in OPTIONS:
        _add(groups[option.group], option)
    parser.add_argument_group(
        "always applied",
        "zero_grad(set_to_none=True), the loss read once per log interval, tensors created "
        f"on the device, torch.load(weights_only=True) {_ALWAYS_TIPS}",
    )
    out = groups["target"]
    out.add_argument("-o", "--output", metavar="PATH", help="write here (default: stdout)")
    out.add_argument("--force", action="store_true", help="overwrite PATH if it exists")


def options_from_args(args: argparse.Namespace) -> ComposeOptions:
    """Build and validate `ComposeOptions` from parsed ``compose`` arguments.

    Raises:
        ContradictoryOptions: the flags contradict each other.
    """
    values: dict[str, Any] = {}
    for option in OPTIONS:
        value = getattr(args, option.name, None)
        if value is not None and value is not False:
            values[option.name] = value
    options = ComposeOptions(**values)
    validate(options)
    return options


def parse_flags(flags: list[str]) -> ComposeOptions:
    """Parse composer flags (``["--amp", "--accum", "4"]``) the way the CLI does.

    Raises:
        ComposeError: the flags do not parse.
        ContradictoryOptions: they contradict each other.
    """
    parser = _Parser(prog="compose", add_help=False)
    add_arguments(parser)
    return options_from_args(parser.parse_args(flags))


class _Parser(argparse.ArgumentParser):
    """Raises argparse's one-line message as a `ComposeError` (the browser shows it, in
    Chinese on the Chinese page with argparse's own words quoted)."""

    def error(self, message: str) -> NoReturn:
        raise ComposeError(message, labels("zh")["compose_err_bad_flags"].format(flags=message))
