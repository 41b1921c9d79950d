"""The composer: write a ``train.py`` that applies exactly the chosen tips.

``python -m generator compose --amp --accum 4 --ddp -o train.py`` turns composer flags into a
`ComposeOptions`, rejects contradictory choices (`ContradictoryOptions`, exit 2,
before anything is written), renders the model's template (`TEMPLATES`:
``templates/compose/train.py.j2`` for the conv net, ``gpt.py.j2`` for ``--model gpt``) and
writes the result atomically. Every block of the script cites the tips behind it
(``# tip: <id> (tips/<id>/)``): the tips whose record declares ``compose: <feature>`` for a
feature the options apply, and the ``compose: always`` tips on the blocks every script has.

The pieces live in modules named for what they hold, re-exported here:
`generator.compose.catalog` (the options, defined once as data), `generator.compose.options`
(their validation and export),
`generator.compose.tips` (which tips each block cites), `generator.compose.flags`
(the subcommand's flags), `generator.compose.docs` (the page's flag tables) and
`generator.compose.results` (the measured figures the composer page shows). This module
renders and writes.

None of them imports torch, NumPy or pydantic, so the browser composer runs them in
Pyodide; rendering imports Jinja, and the tip records (PyYAML) are read only when composing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from generator.compose.docs import FLAGS_PLACEHOLDER, expand_flag_tables, flags_table
from generator.compose.flags import add_arguments, options_from_args, parse_flags
from generator.compose.options import (
    CORE_FEATURES,
    OPTIONS,
    ComposeError,
    ComposeOptions,
    ContradictoryOptions,
    OutputExists,
    options_schema,
    validate,
)
from generator.compose.output import output_path, write_script
from generator.compose.results import (
    GPT_RESULTS_PLACEHOLDER,
    RESULTS_PLACEHOLDER,
    expand_results,
)
from generator.compose.tips import (
    Citations,
    cite_function,
    read_tips_by_feature,
    tips_by_feature,
)

__all__ = [
    "FLAGS_PLACEHOLDER",
    "CORE_FEATURES",
    "OPTIONS",
    "PLACEHOLDER",
    "TEMPLATE",
    "TEMPLATES",
    "ComposeError",
    "ComposeOptions",
    "ContradictoryOptions",
    "OutputExists",
    "add_arguments",
    "cited_tips",
    "compose",
    "expand_placeholders",
    "flags_table",
    "options_from_args",
    "options_schema",
    "output_path",
    "parse_flags",
    "read_tips_by_feature",
    "tips_by_feature",
    "validate",
    "write_script",
]

#: The template of each model's script.
TEMPLATES = {"convnet": "compose/train.py.j2", "gpt": "compose/gpt.py.j2"}
TEMPLATE = TEMPLATES["convnet"]


def compose(
    options: ComposeOptions,
    cites: Mapping[str, Sequence[str]],
    script_name: str = "train.py",
) -> str:
    """Render the training script for ``options``.

    Args:
        options: the composer's choices (validated here).
        cites: feature (and block) -> ids of the tips that declare it, from
            `tips_by_feature` or `read_tips_by_feature`. A feature without tips is applied
            uncited.
        script_name: the file name the docstring's run commands use.

    Returns:
        The script's source code, formatted as ``ruff format`` would.

    Raises:
        ContradictoryOptions: the options contradict each other.
    """
    from generator.compose.peaks import GPU_PEAK_TFLOPS
    from generator.records.render import render

    validate(options)
    context: dict[str, Any] = {
        "o": options,
        "command": options.command(),
        "script": script_name,
        "gpu_peaks": GPU_PEAK_TFLOPS,
    }
    # Pass 1 learns which blocks this script has, so a feature's main block can cite exactly
    # the tips that no part of the same script cites (`generator.compose.tips.Citations`).
    template = TEMPLATES[options.model]
    blocks: set[str] = set()
    render(template, cite=cite_function(None, blocks), **context)
    citations = Citations({f: sorted(ids) for f, ids in cites.items()}, blocks)
    return render(template, cite=cite_function(citations, set()), **context)


#: A Markdown line that stands for the script composed with its flags, e.g.
#: ``<!-- compose: --amp --accum 4 --ddp -->`` in ``docs/composer.md``; indented, the
#: script is indented alike (inside a collapsible block, say).
PLACEHOLDER = re.compile(r"^(?P<indent> *)<!-- compose:(?P<flags>[^>]*)-->$", re.M)


def expand_placeholders(markdown: str, cites: Mapping[str, Sequence[str]]) -> str:
    """Replace each `PLACEHOLDER` line of ``markdown`` with the composed script, each
    ``<!-- compose-flags: MODEL [LANG] -->`` line with the flag table of MODEL
    (`generator.compose.docs.flags_table`) and each ``<!-- compose-results: DEVICE [LANG] -->``
    line with the measured figures (`generator.compose.results.expand_results`).

    The script comes as a fenced ``python`` block, so the docs always show what the composer
    writes today.

    Raises:
        ContradictoryOptions: a placeholder's flags contradict each other.
        ComposeError: a placeholder's flags do not parse.
    """

    def script(match: re.Match[str]) -> str:
        try:
            chosen = parse_flags(match["flags"].split())
        except ContradictoryOptions:
            raise
        except ComposeError:
            raise ComposeError(f"bad flags in {match[0]!r}") from None
        block = f"``` python\n{compose(chosen, cites)}```"
        pad = match["indent"]
        return "\n".join(pad + line if line else line for line in block.split("\n"))

    markdown = PLACEHOLDER.sub(script, markdown)
    markdown = expand_flag_tables(markdown)
    if RESULTS_PLACEHOLDER.search(markdown) or GPT_RESULTS_PLACEHOLDER.search(markdown):
        markdown = expand_results(markdown)
    return markdown


def cited_tips(script: str) -> list[str]:
    """The tip ids a composed script cites, in order of first appearance."""
    out: list[str] = []
    for line in script.splitlines():
        text = line.strip()
        if text.startswith("# tip: "):
            tip_id = text.removeprefix("# tip: ").split(" ", 1)[0]
            if tip_id not in out:
                out.append(tip_id)
    return out
