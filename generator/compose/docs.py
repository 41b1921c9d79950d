"""The composer page's flag tables, made from `generator.compose.catalog.OPTIONS`.

A Markdown line ``<!-- compose-flags: MODEL [LANG] -->`` in ``docs/composer*.md`` becomes
the table of the options that apply to MODEL, with each option's usage as ``--help``
shows it and its text in LANG (`expand_flag_tables`). Nothing is written by hand, so the
page, ``--help`` and the browser composer say the same.
"""

from __future__ import annotations

import re

from generator.compose.options import MODELS, OPTIONS

#: ``<!-- compose-flags: gpt -->`` or ``<!-- compose-flags: convnet zh -->``.
FLAGS_PLACEHOLDER = re.compile(
    r"^<!-- compose-flags: *(?P<model>[a-z]+)(?: +(?P<lang>en|zh))? *-->$", re.M
)


def flags_table(model: str, lang: str = "en") -> str:
    """The Markdown table of the options that apply to ``model``, in ``lang``.

    Raises:
        ValueError: ``model`` is not one of `MODELS`.
    """
    from generator.records import ui

    if model not in MODELS:
        raise ValueError(f"no model {model!r}: one of {', '.join(MODELS)}")
    labels = ui.labels()[lang]
    rows = [
        f"| {labels['composer_flag']} | {labels['composer_does']} |",
        "|---|---|",
    ]
    for option in OPTIONS:
        if model in option.models:
            text = " ".join(option.help[lang].split())
            rows.append(f"| `{option.usage()}` | {text} |")
    return "\n".join(rows)


def expand_flag_tables(markdown: str) -> str:
    """Replace each `FLAGS_PLACEHOLDER` line of ``markdown`` with `flags_table`."""

    def table(match: re.Match[str]) -> str:
        return flags_table(match["model"], match["lang"] or "en")

    return FLAGS_PLACEHOLDER.sub(table, markdown)
