"""The search box and the problem pages in Chromium (issue 27): a rule code finds its rule
alone as the best match, the glossary's variants find the term's tip, both engines read a
query alike (the same terms from the same text, caps included), and every problem page opens
with its triage list.

Needs Debian's Chromium, as tests/site/test_site.py (skipped without it, failed under CI).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.site.browser import require_chromium

require_chromium()

from playwright.sync_api import Page, expect  # noqa: E402

QUERY_SET = Path(__file__).parent / "search_queries.yaml"


@pytest.fixture
def page(browser, base_url: str) -> Iterator[Page]:
    context = browser.new_context()
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    yield pg
    context.close()


def _typed(page: Page, query: str) -> list[tuple[str, bool, str]]:
    """Type ``query`` into the open page's search box: (address, best match?, title) of each
    row, in order."""
    box = page.locator("input.md-search__input")
    box.click()
    box.fill(query)
    box.press("End")
    page.wait_for_function(
        "q => document.querySelector('[data-tip-search]').dataset.query === q", arg=query.strip()
    )
    rows = page.eval_on_selector_all(
        ".md-search-result__item",
        """items => items.filter(li => li.querySelector('a')).map(li => [
            new URL(li.querySelector('a').href).pathname,
            li.classList.contains('tip-search-best'),
            li.querySelector('h1').textContent])""",
    )
    return [tuple(r) for r in rows]


#: Queries typed into the box, by language: rule codes (one without its zero), and names of
#: activation checkpointing the pages do not use (the glossary's variant 梯度检查点, an alias).
TYPED = {
    "en": {
        "codes": [("PTT038", "PTT038"), ("ptt55", "PTT055")],
        "checkpointing": ["gradient checkpointing"],
    },
    "zh": {
        "codes": [("PTT038", "PTT038")],
        "checkpointing": ["梯度检查点", "用梯度检查点节省显存"],
    },
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_rule_codes_and_glossary_variants_typed_into_the_box(
    page: Page, base_url: str, lang: str
) -> None:
    """A rule code shows its rule first, alone as the best match, titled with its message in
    the page's language (issue 27, items 2 and 6); a name of activation checkpointing that
    the pages do not use finds its tip in the top 3."""
    prefix = "zh/" if lang == "zh" else ""
    page.goto(f"{base_url}/{prefix}")
    for query, code in TYPED[lang]["codes"]:
        rows = _typed(page, query)
        assert rows[0][:2] == (f"/{prefix}lint/rules/{code}/", True), (query, rows[:3])
        assert [r for r in rows if r[1]] == rows[:1], (query, "only the rule is the best match")
        title = rows[0][2]
        assert title.startswith(code)
        assert any("\u4e00" <= c <= "\u9fff" for c in title) == bool(prefix), title
    for query in TYPED[lang]["checkpointing"]:
        hrefs = [r[0] for r in _typed(page, query)]
        assert f"/{prefix}tips/activation-checkpointing/" in hrefs[:3], (query, hrefs[:5])


def test_both_engines_read_a_query_alike(page: Page, base_url: str) -> None:
    """The site's search box and `python -m generator search` rank by the same terms for
    every query of the query set, for queries that use the glossary's synonyms, and for
    hostile ones, whose work stays within the caps (a 1 MB query, 30,000 Chinese
    characters): the same text is read, and no more terms than MAX_TERMS are looked up."""
    from generator.records.query import MAX_TERMS, read_query, synonyms

    rng = random.Random(2)
    hostile = [
        "".join(chr(rng.randrange(0x4E00, 0x9FFF)) for _ in range(30_000)),
        " ".join(f"w{rng.randrange(10**9)}" for _ in range(100_000)),  # about 1 MB
        "梯度检查点 " * 500,
        ".*(a+)+$ [ \\ %s%n",
    ]
    synonym_queries = ["GPU内存不够", "学习率 warmup", "batch size 怎么选", "Linux 内核", "VRAM"]
    query_set = yaml.safe_load(QUERY_SET.read_text(encoding="utf-8"))
    for lang in ("en", "zh"):
        queries = [i["q"] for i in query_set[lang]] + synonym_queries + hostile
        page.goto(f"{base_url}/{'zh/' if lang == 'zh' else ''}")
        read = page.evaluate(
            "async qs => { const out = []; for (const q of qs) out.push("
            "await window.tipSearch.read(q)); return out; }",
            queries,
        )
        table = synonyms(lang)
        for query, seen in zip(queries, read, strict=True):
            assert seen["terms"] == read_query(query.strip(), table), query[:40]
            assert len(seen["terms"]) <= MAX_TERMS and len(seen["words"]) <= MAX_TERMS
        # A megabyte is ranked with that bounded work (the timing: benchmarks/search_speed.py).
        ranked = page.evaluate("q => window.tipSearch.results(q, 3)", hostile[1])
        assert isinstance(ranked, list)


@functools.cache
def _problems() -> dict[str, Any]:
    from generator.records.load import load_tips
    from generator.records.problems import load_entry_points

    return load_entry_points(frozenset(str(t.id) for t in load_tips())).problems


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_problem_page_opens_with_its_triage_list(
    page: Page, base_url: str, lang: str
) -> None:
    """Right under the title and the introduction: "if you see this, read that tip", each
    line linking tips of the page's own list, one line per line of tips/_problems.yaml."""
    problems = _problems()
    prefix = "zh/" if lang == "zh" else ""
    for slug, entry in problems.items():
        page.goto(f"{base_url}/{prefix}problems/{slug}/")
        content = page.locator("article.md-content__inner [data-pagefind-body]")
        # h1, the introduction, then the triage, before the full list of tips.
        tags = content.evaluate(
            "el => Array.from(el.children).slice(0, 3).map(c => c.tagName + '.' + c.className)"
        )
        assert tags == ["H1.", "P.", "DIV.tip-triage"], (slug, tags)
        lines = content.locator(".tip-triage li")
        expect(lines).to_have_count(len(entry.triage))
        listed = content.evaluate(
            "el => Array.from(el.querySelectorAll('ol a')).map(a => new URL(a.href).pathname)"
        )
        texts = lines.all_inner_texts()
        for i, line in enumerate(entry.triage):
            links = lines.nth(i).evaluate(
                "li => Array.from(li.querySelectorAll('a')).map(a => new URL(a.href).pathname)"
            )
            assert links == [f"/{prefix}tips/{tip}/" for tip in line.tips], (slug, i)
            assert set(links) <= set(listed), (slug, i, "a tip the page does not list")
            assert texts[i].startswith(line.when.get(lang).replace("`", "")), (slug, texts[i])
