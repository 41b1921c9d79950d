"""Readers see sources by their public title, never the file names of the internal source notes."""

from __future__ import annotations

import re
from pathlib import Path

from generator import paths
from generator.records.load import load_tips
from generator.records.taxonomy import SEEDS

#: The internal notes' file names (``004_ef0790627b2f324f.txt``) and the ways prose used to
#: point at them ("Seeds 000, 002 and 004", "seed 002", "种子文档 000").
INTERNAL = re.compile(
    r"\b\d{3}_[0-9a-f]{16}(?:\.txt)?\b|\bseeds? (?:document )?\d{3}\b|种子文档|原始资料 ?\d{3}",
    re.I,
)


def _visible_text(html: str) -> str:
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


def test_the_pattern_catches_what_pages_used_to_show() -> None:
    for shown in (
        "Seed document 004_ef0790627b2f324f.txt",
        "Seeds 000, 002 and 004 use torch.cuda.amp",
        "as seed 002 claims",
        "种子文档 000、002 和 004",
    ):
        assert INTERNAL.search(shown), shown
    assert not INTERNAL.search("seed 0 for reproducibility; torch.manual_seed(1234)")


def test_seed_sources_are_cited_by_public_title() -> None:
    for label in SEEDS.values():
        for text in (label.en, label.zh):
            assert not INTERNAL.search(text) and "seed" not in text.lower(), text


def test_no_record_text_names_an_internal_note() -> None:
    found = []
    for tip in load_tips():
        for lang in ("en", "zh"):
            for path, value in _texts(tip.model_dump(), lang):
                if INTERNAL.search(value):
                    found.append(f"{tip.id}: {path}: {INTERNAL.search(value).group(0)!r}")
    assert not found, "\n".join(found)


def _texts(obj: object, lang: str, path: str = "") -> list[tuple[str, str]]:
    if isinstance(obj, dict):
        out = []
        for key, value in obj.items():
            if key in ("en", "zh") and isinstance(value, str):
                if key == lang:
                    out.append((path, value))
            else:
                out += _texts(value, lang, f"{path}.{key}")
        return out
    if isinstance(obj, list):
        return [t for i, item in enumerate(obj) for t in _texts(item, lang, f"{path}[{i}]")]
    return []


def test_no_built_page_shows_an_internal_note_name(built_site: Path) -> None:
    pages = list(built_site.rglob("*.html"))
    assert len(pages) > 100
    bad = []
    for html in pages:
        text = _visible_text(html.read_text(encoding="utf-8"))
        match = INTERNAL.search(text)
        if match:
            bad.append(f"{html.relative_to(built_site)}: {match.group(0)!r}")
    assert not bad, "\n".join(bad[:20])
    hand_written = [p for p in paths.DOCS.glob("*.md")]
    assert all(not INTERNAL.search(p.read_text(encoding="utf-8")) for p in hand_written)
