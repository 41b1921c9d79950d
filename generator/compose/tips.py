"""Which tips a composed script cites: the records' ``compose`` field, mapped onto the
template's blocks (`BLOCK_WORDS`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from generator.records.taxonomy import COMPOSE_FEATURES

if TYPE_CHECKING:
    from generator.records.schema import Tip

_ID = r"[a-z0-9]+(?:-[a-z0-9]+)*"  # generator.records.fields.ID_PATTERN, without importing pydantic

#: Blocks that cite only some of a feature's tips: those with one of the words in their id.
#: Any other block named ``<feature>`` or ``<feature>.<part>`` cites the feature's remaining
#: tips, the ones that no specific block of the same script cites; so every tip of a chosen
#: feature is cited at least once, and a specific block that matches nothing cites nothing.
BLOCK_WORDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "always.zero-grad": ("always", ("zero-grad",)),
    "always.detach": ("always", ("detach",)),
    "always.sync": ("always", ("sync",)),
    "always.device": ("always", ("on-device",)),
    "always.load": ("always", ("weights-only", "load", "state-dict")),
    "always.mfu": ("always", ("mfu",)),
    "always.resume": ("always", ("data-resume",)),
    "amp.scaler": ("amp", ("scaler",)),
    "accum.no-sync": ("accum", ("no-sync",)),
    "accum.scaler": ("accum", ("gradscaler",)),
    "ddp.sampler": ("ddp", ("sampler",)),
    "ddp.rank-zero": ("ddp", ("rank-zero", "unwrap", "save")),
    "clip-grad-norm.unscale": ("clip-grad-norm", ("unscale",)),
    "workers.pin": ("workers", ("pin", "non-blocking")),
    "gpt.sdpa": ("gpt", ("sdpa",)),
    "fsdp.meta": ("fsdp", ("meta",)),
    "fsdp.checkpoint": ("fsdp", ("checkpoint",)),
}


def tips_by_feature(tips: Iterable[Tip]) -> dict[str, list[str]]:
    """Map each composer feature to the ids of the tips declaring it (sorted).

    Features that no tip declares are absent.
    """
    out: dict[str, list[str]] = {}
    for tip in tips:
        if tip.compose is not None and tip.id:
            out.setdefault(tip.compose, []).append(tip.id)
    return {feature: sorted(ids) for feature, ids in out.items()}


def read_tips_by_feature(folder: Path | None = None) -> dict[str, list[str]]:
    """Like `tips_by_feature`, reading only the ``compose`` field of each record.

    The composer must answer in well under a second, and validating every record takes
    longer than that, so this parses the YAML (with libyaml when present) and nothing more.
    Files that ``python -m generator validate`` would skip are skipped; a file that does
    not parse, or whose ``compose`` is not a known feature, cites nothing.
    ``python -m generator validate`` is what checks the records.

    Args:
        folder: the records' folder (default: ``tips/``).
    """
    import yaml

    from generator import paths

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out: dict[str, list[str]] = {}
    for path in sorted((folder or paths.TIPS).glob("*.yaml")):
        if path.name.startswith(("_", ".")) or not re.fullmatch(_ID, path.stem):
            continue
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        feature = data.get("compose") if isinstance(data, dict) else None
        if isinstance(feature, str) and feature in COMPOSE_FEATURES:
            out.setdefault(feature, []).append(path.stem)
    return out


class Citations:
    """Resolves a template block name to the tip ids it cites (see `BLOCK_WORDS`)."""

    def __init__(self, by_feature: Mapping[str, list[str]], blocks: set[str]):
        self.by_feature = by_feature
        self.blocks = blocks  # the blocks the script contains (first rendering pass)

    def ids(self, block: str) -> list[str]:
        feature, words = BLOCK_WORDS.get(block, (block.split(".")[0], ()))
        tips = self.by_feature.get(feature, [])
        if words:
            return [t for t in tips if any(w in t for w in words)]
        claimed = {
            t
            for name, (feat, ws) in BLOCK_WORDS.items()
            if feat == feature and name in self.blocks
            for t in tips
            if any(w in t for w in ws)
        }
        return [t for t in tips if t not in claimed]


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
