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


def _annotation(option: Option) -> str:
    """The field's type: ``bool`` for a flag, the number type, or the literal choices; with
    ``| None`` where the default is None."""
    if option.kind == "choice":
        values = list(option.choices)
        if option.default is not None and option.default not in values:
            values.append(option.default)
        kind = f"Literal[{', '.join(_literal(v) for v in values)}]"
    else:
        kind = _SCALARS[option.kind]
    return kind if option.default is not None else f"{kind} | None"


def _literal(value: object) -> str:
    """``value`` as Python source (double-quoted strings, as the formatter writes them)."""
    return '"' + value + '"' if isinstance(value, str) and '"' not in value else repr(value)


def fields_module() -> str:
    """The source of ``option_fields.py`` for today's catalog."""
    lines = [_HEADER]
    for option in OPTIONS:
        lines.append(f"    #: {option.usage()}")
        lines.append(f"    {option.name}: {_annotation(option)} = {_literal(option.default)}")
    return "\n".join(lines) + "\n"


def generated_files() -> dict[Path, str]:
    """The composer's generated files and their expected content."""
    return {FIELDS_MODULE: fields_module()}
