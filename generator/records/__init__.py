"""The tip records: schema, YAML loading, validation, glossary, taxonomy, search, snippets.

The bottom layer: it imports no other capability. `load_tips`, `get_tip`, `validate` and `Tip`
are importable from here; they load lazily, so a light import (`generator.records.taxonomy`,
as the composer and the browser do) does not pull in pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from generator.records.load import get_tip, load_tips, validate
    from generator.records.schema import Tip

__all__ = ["Tip", "get_tip", "load_tips", "validate"]


def __getattr__(name: str) -> Any:
    if name in ("get_tip", "load_tips", "validate"):
        from generator.records import load

        return getattr(load, name)
    if name == "Tip":
        from generator.records.schema import Tip

        return Tip
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
