"""Which tips a composed script cites: the records' ``compose`` field (the feature) and
``compose_block`` (the part of the script, a template block, that cites the tip).

A template marks each block of a script with ``cite("<feature>")``, the feature's main block,
or ``cite("<feature>.<part>")``, a part of it. A part cites exactly the tips whose record
names it (``compose_block: always.load``); a main block cites the feature's other tips, and
those whose part this script does not have, so every tip of a chosen feature is cited at
least once. `block_problems` holds each record's ``compose_block`` to the blocks the
templates have (a cross-check of ``python -m generator validate``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from generator.records.taxonomy import COMPOSE_FEATURES

if TYPE_CHECKING:
    from generator.errors import Problem
    from generator.records.schema import Tip
    from generator.records.yamlio import Document

_ID = r"[a-z0-9]+(?:-[a-z0-9]+)*"  # generator.records.fields.ID_PATTERN, without importing pydantic


def _add(out: dict[str, list[str]], tip_id: str, feature: str, block: str | None) -> None:
    out.setdefault(feature, []).append(tip_id)
    if block is not None:
        out.setdefault(block, []).append(tip_id)


def tips_by_feature(tips: Iterable[Tip]) -> dict[str, list[str]]:
    """Map each composer feature to the ids of the tips declaring it, and each block a
    record names (``always.load``) to the ids of the tips naming it (sorted).

    Features that no tip declares are absent.
    """
    out: dict[str, list[str]] = {}
    for tip in tips:
        if tip.compose is not None and tip.id:
            _add(out, tip.id, tip.compose, tip.compose_block)
    return {key: sorted(ids) for key, ids in out.items()}


def read_tips_by_feature(folder: Path | None = None) -> dict[str, list[str]]:
    """Like `tips_by_feature`, reading only the ``compose`` and ``compose_block`` fields of
    each record.

    The composer must answer in well under a second, and validating every record takes
    longer than that, so this parses the YAML (with libyaml when present) and nothing more.
    Files that ``python -m generator validate`` would skip are skipped; a file that does
    not parse, or whose ``compose`` is not a known feature, cites nothing; a
    ``compose_block`` that is not a part of its feature is left out (the tip is cited in the
    feature's main block). ``python -m generator validate`` is what checks the records.

    Args:
        folder: the records' folder (default: ``tips/``).
    """
    from generator import paths

    out: dict[str, list[str]] = {}
    for path in sorted((folder or paths.TIPS).glob("*.yaml")):
        if path.name.startswith(("_", ".")) or not re.fullmatch(_ID, path.stem):
            continue
        data = _fields(_text(path))
        feature = data.get("compose")
        if isinstance(feature, str) and feature in COMPOSE_FEATURES:
            block = data.get("compose_block")
            part = block if isinstance(block, str) and block.startswith(f"{feature}.") else None
            _add(out, path.stem, feature, part)
    return out


#: A top-level ``compose`` or ``compose_block`` key, and a plain value of one.
_COMPOSE_KEY = re.compile(r"^compose(?:_block)?\s*:", re.M)
_PLAIN = re.compile(r"^(compose(?:_block)?):[ \t]*([\w.-]+)[ \t]*(?:#.*)?$", re.M)


def _fields(text: str) -> dict[object, object]:
    """The ``compose`` and ``compose_block`` of a record's text. Parsing every record took
    half the composer's time and most have neither key: a record whose keys have plain values
    (every record today) is read by a pattern, any other one by the YAML parser."""
    keys = _COMPOSE_KEY.findall(text)
    if not keys:
        return {}
    plain = _PLAIN.findall(text)
    if len(plain) == len(keys):
        return dict(plain)
    return _read_text(text)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _read_text(text: str) -> dict[object, object]:
    """The mapping of a YAML text (libyaml's parser when present); empty when it is not one."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


class Citations:
    """Resolves a template block name to the tip ids it cites: a part (``always.load``) the
    tips naming it, a feature's main block (``always``) the feature's other tips."""

    def __init__(self, cites: Mapping[str, list[str]], blocks: set[str]):
        self.cites = cites  # `tips_by_feature`
        self.blocks = blocks  # the blocks the script contains (first rendering pass)

    def ids(self, block: str) -> list[str]:
        if "." in block:
            return list(self.cites.get(block, []))
        claimed = {
            t
            for name in self.blocks
            if name.startswith(f"{block}.")
            for t in self.cites.get(name, [])
        }
        return [t for t in self.cites.get(block, []) if t not in claimed]


@cache
def template_blocks() -> frozenset[str]:
    """Every block name the composer's templates pass to ``cite(...)``, found with Jinja's
    own parser."""
    import jinja2
    from jinja2 import nodes

    from generator import paths

    env = jinja2.Environment()
    found: set[str] = set()
    for path in sorted((paths.TEMPLATES / "compose").rglob("*.j2")):
        for call in env.parse(path.read_text(encoding="utf-8")).find_all(nodes.Call):
            if isinstance(call.node, nodes.Name) and call.node.name == "cite" and call.args:
                first = call.args[0]
                if isinstance(first, nodes.Const) and isinstance(first.value, str):
                    found.add(first.value)
    return frozenset(found)


def block_problems(
    loaded: Mapping[Path, tuple[Tip, Document]], whole_corpus: bool
) -> list[Problem]:
    """Each record's ``compose_block`` names a part block the templates have (a cross-check
    of `generator.records.load.validate`)."""
    from generator.command import relative
    from generator.errors import Problem

    parts = sorted(b for b in template_blocks() if "." in b)
    problems = []
    for path, (tip, doc) in loaded.items():
        block = tip.compose_block
        if block is None or block in parts:
            continue
        close = difflib.get_close_matches(block, parts, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        reason = f"no template block {block!r} (generator/templates/compose){hint}"
        problems.append(
            Problem(relative(path), doc.line_of(("compose_block",)), "compose_block", reason)
        )
    return problems


def cite_function(citations: Citations | None, seen: set[str]) -> Callable[..., str]:
    """The template's ``cite(block, indent, silent)``: it records each block it is called
    for in ``seen`` and returns the block's ``# tip:`` lines (none while ``citations`` is
    None). A silent block returns nothing: a template that states a block's tips do not
    apply to its script (the GPT script has no GradScaler) keeps them out of the
    feature's main block."""

    def cite(block: str, indent: int = 4, silent: bool = False) -> str:
        """Comment lines citing the tips of ``block``, each ending in a newline."""
        seen.add(block)
        if citations is None or silent:
            return ""
        pad = " " * indent
        return "".join(f"{pad}# tip: {i} (tips/{i}/)\n" for i in citations.ids(block))

    return cite
