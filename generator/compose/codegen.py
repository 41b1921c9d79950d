"""The composer's one generated module, ``option_fields.py``: the typed fields of
`generator.compose.options.ComposeOptions`, one per option of
`generator.compose.catalog.OPTIONS`, so that a type checker, an IDE and a reader see them.

The catalog stays the one source: ``python -m generator snippets`` writes the module from it,
and ``python -m generator check`` fails while the module differs from what the catalog gives.
"""

from __future__ import annotations

from pathlib import Path

from generator.compose.catalog import OPTIONS
from generator.compose.option_types import Option

FIELDS_MODULE = Path(__file__).with_name("option_fields.py")

_HEADER = '''"""The fields of `generator.compose.options.ComposeOptions`, one per option of
`generator.compose.catalog.OPTIONS`, in its order.

Generated from the catalog by ``python -m generator snippets`` (`generator.compose.codegen`);
``python -m generator check`` fails when it is stale. Do not edit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class OptionFields:
    """The composer's choices, one field per option (``clip_grad_norm`` for
    ``--clip-grad-norm``). The defaults compose the plain conv-net script."""
'''

_SCALARS = {"flag": "bool", "int": "int", "float": "float"}


#: The formatter's line length (``[tool.ruff]``): a longer field is written as it formats it.
_WIDTH = 100


def _field(option: Option) -> list[str]:
    """The field's lines: ``name: type = default``, its type ``bool`` for a flag, the number
    type, or the literal choices, with ``| None`` where the default is None. A line longer
    than the formatter's is written as ``ruff format`` writes it: one choice a line."""
    default = _literal(option.default)
    optional = " | None" if option.default is None else ""
    if option.kind != "choice":
        return [f"    {option.name}: {_SCALARS[option.kind]}{optional} = {default}"]
    values = list(option.choices)
    if option.default is not None and option.default not in values:
        values.append(option.default)
    line = f"    {option.name}: Literal[{', '.join(map(_literal, values))}]{optional} = {default}"
    if len(line) <= _WIDTH:
        return [line]
    if not optional:
        return [
            f"    {option.name}: Literal[",
            *(f"        {_literal(v)}," for v in values),
            f"    ] = {default}",
        ]
    return [
        f"    {option.name}: (",
        "        Literal[",
        *(f"            {_literal(v)}," for v in values),
        "        ]",
        "        | None",
        f"    ) = {default}",
    ]


def _literal(value: object) -> str:
    """``value`` as Python source (double-quoted strings, as the formatter writes them)."""
    return '"' + value + '"' if isinstance(value, str) and '"' not in value else repr(value)


def fields_module() -> str:
    """The source of ``option_fields.py`` for today's catalog."""
    lines = [_HEADER]
    for option in OPTIONS:
        lines += [f"    #: {option.usage()}", *_field(option)]
    return "\n".join(lines) + "\n"


def generated_files() -> dict[Path, str]:
    """The composer's generated files and their expected content."""
    return {FIELDS_MODULE: fields_module()}
