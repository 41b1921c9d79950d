"""The static site: strict build, both languages, every tip page, segmented Chinese search."""

from __future__ import annotations

import json
import re
from pathlib import Path

from generator.records import load_tips
from generator.snippets import snippet_path

TIPS = load_tips()


def test_every_tip_has_a_page_in_both_languages(built_site: Path) -> None:
    for tip in TIPS:
        en = built_site / "tips" / str(tip.id) / "index.html"
        zh = built_site / "zh" / "tips" / str(tip.id) / "index.html"
        assert en.exists() and zh.exists(), tip.id
        assert tip.title.en in en.read_text(encoding="utf-8").replace("&amp;", "&")
        assert tip.title.zh in zh.read_text(encoding="utf-8").replace("&amp;", "&")


def test_snippet_downloads_resolve(built_site: Path) -> None:
    for tip in TIPS:
        for name in tip.variants():
            served = built_site / "snippets" / str(tip.id) / f"{name}.py"
            assert served.read_text(encoding="utf-8") == snippet_path(str(tip.id), name).read_text(
                encoding="utf-8"
            )


def test_chinese_search_index_is_segmented(built_site: Path) -> None:
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert "\\u200b" in index["config"]["separator"]
    zh_docs = [d for d in index["docs"] if d["location"].startswith("zh/tips/")]
    assert zh_docs
    segmented = [
        d for d in zh_docs if re.search(r"[\u4e00-\u9fff]\u200b[\u4e00-\u9fff]", d["text"])
    ]
    assert len(segmented) >= len(zh_docs) // 2


def test_pages_load_nothing_from_other_hosts(built_site: Path) -> None:
    pattern = re.compile(
        r"<(?:script|link|img|iframe)[^>]+(?:src|href)=\"(https?:)?//(?!127\.0\.0\.1)"
    )
    for html in built_site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        bad = [m.group(0) for m in pattern.finditer(text)]
        assert not bad, f"{html}: {bad[:3]}"
