"""The built site in a real browser: search (English, Chinese, API names), language switcher,
code tabs and copy buttons, catalog filters, and no request leaving 127.0.0.1.

Needs Debian's Chromium (`apt-get install chromium fonts-wqy-microhei`). Without it these tests
are skipped with that reason, except under CI (CI=true), where a missing browser is a failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.site.browser import require_chromium

require_chromium()

from playwright.sync_api import Page, expect  # noqa: E402


@pytest.fixture
def page(browser, base_url: str) -> Iterator[Page]:
    context = browser.new_context()
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    yield pg
    context.close()


def _results(page: Page, query: str) -> list[str]:
    """Type ``query`` into the search box of the open page; the result links, best first."""
    box = page.locator("input.md-search__input")
    box.fill(query)
    # docs/assets/search.js marks the box with the query whose results it shows.
    page.wait_for_function(
        "q => document.querySelector('[data-tip-search]').dataset.query === q", arg=query.strip()
    )
    return page.eval_on_selector_all(
        ".md-search-result__item > a", "links => links.map(a => new URL(a.href).pathname)"
    )


def _search(page: Page, base_url: str, query: str, lang_prefix: str = "") -> list[str]:
    page.goto(f"{base_url}/{lang_prefix}")
    page.locator("input.md-search__input").click()
    hrefs = _results(page, query)
    expect(page.locator(".md-search-result__item > a").first).to_be_visible()
    return hrefs[:5]


@pytest.mark.parametrize(
    ("query", "lang_prefix", "expected"),
    [
        ("gradient accumulation", "", "tips/gradient-accumulation/"),
        ("no_grad", "", "tips/inference-mode-for-eval/"),
        ("set_to_none", "", "tips/zero-grad-set-to-none/"),
        ("显存", "zh/", "tips/"),
        ("混合精度", "zh/", "tips/autocast-mixed-precision/"),
        ("梯度累积", "zh/", "tips/gradient-accumulation/"),
    ],
    ids=[
        "english",
        "api-no_grad",
        "api-set_to_none",
        "chinese-显存",
        "chinese-混合精度",
        "chinese-梯度累积",
    ],
)
def test_search_finds_the_tip(
    page: Page, base_url: str, query: str, lang_prefix: str, expected: str
) -> None:
    hrefs = _search(page, base_url, query, lang_prefix)
    assert any(expected in h for h in hrefs), f"{query!r} -> {hrefs}"
    assert all(h.startswith("/zh/") == bool(lang_prefix) for h in hrefs), hrefs


#: The share of tests/site/search_queries.yaml whose page must be in the top 3, in each
#: language (issue 17). Measured after issue 27's 52 new queries: 113/118 English, 114/118
#: Chinese; the misses are queries that other pages answer as well (the test prints them).
SEARCH_FLOOR = 0.95

#: Ranks the whole query set in the page, one call per language: the ranking the search box
#: shows (docs/assets/search.js's window.tipSearch), without typing each query.
RANK_ALL_JS = """async (queries) => {
    const out = [];
    for (const q of queries) out.push(await window.tipSearch.results(q, 20));
    return out;
}"""


def expected_page(item: dict[str, str], site: Path) -> str:
    """The page a query of the set should find, as a path under the language root: its
    ``page`` (or ``tips/<tip>``), or the nearest page above it when the site has no such page
    (``lint/rules/PTT020`` is ``lint/`` until the rule pages exist)."""
    path = (item.get("page") or f"tips/{item['tip']}").strip("/")
    while "/" in path and not (site / path / "index.html").exists():
        path = path.rsplit("/", 1)[0]
    return path.lower() + "/"


def test_search_query_set(page: Page, base_url: str, built_site: Path) -> None:
    """Every query of tests/site/search_queries.yaml ranked by the search box's own code, as
    users phrase problems, English ones on an English page and Chinese ones on a Chinese page:
    the named page (a tip, a problem, a tool, a lint rule) must be in the top 3 often enough in
    each language, and no result may be in the other language. The first queries of each
    language are also typed into the box, which must show the same ranking."""
    import yaml

    query_set = yaml.safe_load(
        (Path(__file__).parent / "search_queries.yaml").read_text(encoding="utf-8")
    )
    assert set(query_set) == {"en", "zh"}
    assert len(query_set["zh"]) >= len(query_set["en"]) >= 50  # half of them Chinese
    failures, other_language = [], []
    for lang, queries in query_set.items():
        prefix = "zh/" if lang == "zh" else ""
        page.goto(f"{base_url}/{prefix}")
        ranked = page.evaluate(RANK_ALL_JS, [item["q"] for item in queries])
        page.locator("input.md-search__input").click()
        for item, top in zip(queries[:3], ranked, strict=False):
            assert _results(page, item["q"]) == top
        missed = []
        for item, top in zip(queries, ranked, strict=True):
            hrefs = [h.lower() for h in top]
            other_language += [h for h in hrefs if h.startswith("/zh/") != (lang == "zh")]
            want = f"/{prefix}{expected_page(item, built_site / prefix)}"
            if want not in hrefs[:3]:
                missed.append(f"{item['q']!r}: {want} not in {hrefs[:3]}")
        found = len(queries) - len(missed)
        print(f"\nsearch {lang}: {found}/{len(queries)} in the top 3")
        print(*missed, sep="\n")
        if found < SEARCH_FLOOR * len(queries):
            failures.append(f"{lang}: {found}/{len(queries)}\n" + "\n".join(missed))
    assert not other_language, f"results in the other language: {other_language[:5]}"
    assert not failures, "\n".join(failures)


def test_search_box_best_match_count_snippets_and_tab(page: Page, base_url: str) -> None:
    """One page load: the best-match row, a count that matches the rows the list holds, all of
    them reachable, summaries without Markdown, rule codes, and Tab kept in the dialog."""
    page.goto(f"{base_url}/")
    box = page.locator("input.md-search__input")
    box.click()
    # A tool's name: the tool's page is the best match, marked and labelled, and listed once.
    _results(page, "lint")
    first = page.locator(".md-search-result__item").first
    expect(first).to_have_class(re.compile("tip-search-best"))
    assert first.locator("a").get_attribute("href").endswith("/lint/")
    expect(first.locator(".tip-search-kind")).to_have_text("Best match")
    hrefs = _results(page, "lint")
    assert len(hrefs) == len(set(hrefs)), hrefs
    # A rule code finds the page that documents the rule.
    assert re.search(r"/lint/(rules/ptt020/)?$", _results(page, "PTT020")[0].lower())
    # The count is the number of rows, once "Show more" has shown them all.
    _results(page, "memory")
    label = page.locator(".md-search-result__meta").inner_text()
    more = page.locator(".tip-search-more button")
    assert more.count() == 1, "a broad query lists more than one screen of results"
    items = page.locator(".md-search-result__item")
    while more.count():
        shown = items.count()
        more.click()  # then wait for its rows: the button is replaced (or gone) only after
        page.wait_for_function(
            "n => document.querySelectorAll('.md-search-result__item').length > n", arg=shown
        )
    rows = items.count()
    assert label == f"{rows} matching documents", (label, rows)
    # Summaries are plain text: the tip's *and* shows without its asterisks.
    _results(page, "empty_cache")
    texts = page.locator(".md-search-result__item p").all_inner_texts()
    assert texts and not any("*" in t or "`" in t for t in texts), texts
    # Tab cycles inside the open search dialog, forwards and backwards.
    box.focus()
    for key in ["Tab"] * 25 + ["Shift+Tab"] * 30:
        page.keyboard.press(key)
        inside = page.evaluate("() => !!document.activeElement.closest('.md-search__inner')")
        assert inside, f"{key} left the search dialog"


def test_search_opens_from_the_keyboard_and_from_the_home_page_card(
    page: Page, base_url: str
) -> None:
    page.goto(f"{base_url}/tips/gradient-accumulation/")
    page.keyboard.press("/")
    expect(page.locator("input.md-search__input")).to_be_focused()
    page.keyboard.press("Escape")
    assert not page.locator("#__search").is_checked()
    page.goto(f"{base_url}/")
    page.locator("a[data-search-open]").first.click()
    expect(page.locator("input.md-search__input")).to_be_focused()
    page.goto(f"{base_url}/zh/?q=多卡训练")
    page.wait_for_function("() => document.querySelector('[data-tip-search]').dataset.query")
    links = page.locator(".md-search-result__item > a")
    # The problem page is the best match; the tips follow.
    assert links.first.get_attribute("href") == "/zh/problems/several-gpus/"
    assert (links.nth(1).get_attribute("href") or "").startswith("/zh/tips/")


def test_language_switcher_keeps_the_tip(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/tips/gradient-accumulation/")
    english_title = page.locator("h1").inner_text()
    page.locator(".md-header__option .md-select").first.hover()
    page.locator('a[hreflang="zh"]').first.click()
    page.wait_for_url("**/zh/tips/gradient-accumulation/")
    chinese_title = page.locator("h1").inner_text()
    assert chinese_title != english_title and any("\u4e00" <= c <= "\u9fff" for c in chinese_title)
    page.locator(".md-header__option .md-select").first.hover()
    page.locator('a[hreflang="en"]').first.click()
    page.wait_for_url(f"{base_url}/tips/gradient-accumulation/")
    assert page.locator("h1").inner_text() == english_title


def test_code_tabs_switch_and_every_block_has_a_copy_button(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/tips/gradient-accumulation/")
    tabs = page.locator(".tabbed-labels > label")
    assert tabs.all_inner_texts() == ["After", "Changes", "Before"]
    blocks = page.locator(".tabbed-block")
    expect(blocks.nth(0)).to_be_visible()  # the after code is shown first
    tabs.nth(2).click()
    expect(blocks.nth(2)).to_be_visible()
    expect(blocks.nth(0)).to_be_hidden()
    tabs.nth(1).click()
    expect(blocks.nth(1).locator("code .gi").first).to_be_visible()  # lines added by after.py
    tabs.nth(0).click()
    expect(blocks.nth(0)).to_be_visible()
    code_blocks = page.locator("div.highlight")
    assert code_blocks.count() >= 3
    for i in range(code_blocks.count()):
        block = code_blocks.nth(i)
        code_id = block.locator("pre").get_attribute("id")
        copy = block.locator("button[data-clipboard-target]")
        assert copy.count() == 1, f"code block {i} has no copy button"
        assert copy.get_attribute("data-clipboard-target") == f"#{code_id} > code"


def test_catalog_filter_narrows_the_list(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/catalog/")
    rows = page.locator("#tip-catalog tbody tr")
    total = rows.count()
    assert total >= 10
    page.select_option("#filter-category", "memory")
    visible = page.locator("#tip-catalog tbody tr:not([hidden])")
    shown = visible.count()
    assert 0 < shown < total
    for i in range(shown):
        assert visible.nth(i).get_attribute("data-category") == "memory"
    page.select_option("#filter-helps-on", "cuda")
    assert page.locator("#tip-catalog tbody tr:not([hidden])").count() <= shown
    page.select_option("#filter-category", "")
    page.select_option("#filter-helps-on", "")
    assert page.locator("#tip-catalog tbody tr:not([hidden])").count() == total


def test_catalog_helps_on_filter_finds_the_multi_gpu_tips(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/catalog/")
    total = page.locator("#tip-catalog tbody tr").count()
    page.select_option("#filter-helps-on", "multi-gpu")  # "several GPUs"
    visible = page.locator("#tip-catalog tbody tr:not([hidden])")
    shown = visible.count()
    assert 0 < shown < total, "the several-GPUs filter matches no tip"
    hrefs = []
    for i in range(shown):
        assert "multi-gpu" in (visible.nth(i).get_attribute("data-helps") or "").split()
        hrefs.append(visible.nth(i).locator("a").first.get_attribute("href") or "")
    assert any("ddp" in h for h in hrefs), hrefs
    expect(page.locator("#catalog-count")).to_have_text(f"{shown} tips shown")


def test_no_request_leaves_localhost(page: Page, base_url: str) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{base_url}/")
    page.goto(f"{base_url}/tips/autocast-mixed-precision/")
    page.goto(f"{base_url}/zh/tips/autocast-mixed-precision/")
    _search(page, base_url, "memory")
    page.wait_for_load_state("networkidle")
    hosts = {urlsplit(u).hostname for u in requested if not u.startswith(("data:", "blob:"))}
    assert requested and hosts == {"127.0.0.1"}, sorted(set(requested))


# --- catalog, tip pages, charts and small screens (issue 12) ----------------------------------

SORTED_JS = """(cells) => {
    const c = new Intl.Collator(document.documentElement.lang, {sensitivity: "base", numeric: true});
    return cells.every((t, i) => i === 0 || c.compare(cells[i - 1], t) <= 0);
}"""


def _visible_cells(page: Page, column: int) -> list[str]:
    return page.locator(
        f"#tip-catalog tbody tr:not([hidden]) td:nth-child({column})"
    ).all_inner_texts()


@pytest.mark.parametrize("lang_prefix", ["", "zh/"], ids=["en", "zh"])
def test_catalog_is_a_material_table_sorted_by_title_then_by_a_clicked_column(
    page: Page, base_url: str, lang_prefix: str
) -> None:
    page.goto(f"{base_url}/{lang_prefix}catalog/")
    assert page.locator(".md-typeset__table #tip-catalog").count() == 1  # Material's table
    titles = _visible_cells(page, 1)
    assert len(titles) >= 10 and page.evaluate(SORTED_JS, titles)
    assert not any("`" in t for t in titles)
    if not lang_prefix:
        assert page.locator("#tip-catalog td:first-child code").count() > 0  # inline code
    header = page.locator('#tip-catalog th[data-sort="category"]')
    header.click()
    expect(header).to_have_attribute("aria-sort", "ascending")
    assert "sort=category" in page.url
    categories = _visible_cells(page, 2)
    assert page.evaluate(SORTED_JS, categories) and len(set(categories)) > 1
    header.press("Enter")  # the keyboard works too: the other way round
    expect(header).to_have_attribute("aria-sort", "descending")
    assert "order=desc" in page.url
    descending = _visible_cells(page, 1)
    assert page.evaluate(SORTED_JS, _visible_cells(page, 2)[::-1])
    page.reload()  # the sort lives in the URL
    expect(page.locator('#tip-catalog th[data-sort="category"]')).to_have_attribute(
        "aria-sort", "descending"
    )
    assert _visible_cells(page, 1) == descending


def test_catalog_filters_live_in_the_url_and_say_when_nothing_matches(
    page: Page, base_url: str
) -> None:
    page.goto(f"{base_url}/catalog/")
    total = page.locator("#tip-catalog tbody tr").count()
    page.fill("#filter-text", "accumulat")
    page.select_option("#filter-helps-on", "cuda")
    rows = page.locator("#tip-catalog tbody tr:not([hidden])")
    shown = rows.count()
    assert 0 < shown < total
    for i in range(shown):
        assert "accumulat" in (rows.nth(i).get_attribute("data-text") or "")
        assert "cuda" in (rows.nth(i).get_attribute("data-helps") or "").split()
    assert "text=accumulat" in page.url and "helps=cuda" in page.url
    expect(page.locator("#catalog-count")).to_have_text(f"{shown} tips shown")
    # The URL restores the same view in a fresh load.
    page.goto(page.url)
    expect(page.locator("#filter-text")).to_have_value("accumulat")
    expect(page.locator(".md-search__output")).to_be_hidden()  # not Material's `?q=` search
    expect(page.locator("#filter-helps-on")).to_have_value("cuda")
    assert page.locator("#tip-catalog tbody tr:not([hidden])").count() == shown
    # Nothing matches: a message, not a bare header; one click clears every filter.
    expect(page.locator("#catalog-empty")).to_be_hidden()
    page.fill("#filter-text", "no tip says this")
    expect(page.locator("#catalog-empty")).to_be_visible()
    expect(page.locator("#tip-catalog")).to_be_hidden()  # no bare header
    expect(page.locator("#catalog-count")).to_have_text("0 tips shown")
    page.click("#catalog-reset")
    expect(page.locator("#catalog-empty")).to_be_hidden()
    assert page.locator("#tip-catalog tbody tr:not([hidden])").count() == total
    assert "text=" not in page.url and "helps=" not in page.url
    # A Chinese page restores its filter from the URL too.
    page.goto(f"{base_url}/zh/catalog/?category=memory")
    expect(page.locator("#filter-category")).to_have_value("memory")
    visible = page.locator("#tip-catalog tbody tr:not([hidden])")
    assert 0 < visible.count() < total
    assert {visible.nth(i).get_attribute("data-category") for i in range(visible.count())} == {
        "memory"
    }


VIEWPORTS = [(1280, 800), (390, 844)]


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["1280x800", "390x844"])
@pytest.mark.parametrize(
    ("lang_prefix", "tip_id"),
    [("", "gradient-accumulation"), ("zh/", "free-memory-empty-cache")],
    ids=["en", "zh-long-title"],
)
def test_the_first_screen_of_a_tip_page_shows_its_after_code(
    browser,
    base_url: str,
    viewport: tuple[int, int],
    lang_prefix: str,
    tip_id: str,
) -> None:
    from generator.records.load import load_tips

    tip = next(t for t in load_tips() if t.id == tip_id)
    assert tip.after is not None
    width, height = viewport
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(f"{base_url}/{lang_prefix}tips/{tip_id}/")
        after_label = "改进后" if lang_prefix else "After"
        expect(page.locator(".tabbed-labels > label").first).to_have_text(after_label)
        block = page.locator(".tabbed-block").first
        expect(block).to_be_visible()
        code = block.locator("pre").first
        first_line = tip.after.code.strip().splitlines()[0]
        assert code.inner_text().strip().startswith(first_line)
        box = code.bounding_box()
        assert box is not None
        code_top = box["y"]
        assert code_top < height - 60, f"the after code starts at {code_top}px of {height}px"
        for selector in ("h1", ".tip-summary", ".tip-badges", ".tip-verified"):
            box = page.locator(selector).first.bounding_box()
            assert box is not None and box["y"] + box["height"] <= code_top, selector
    finally:
        context.close()


@pytest.mark.parametrize(
    "path",
    [
        "",
        "catalog/",
        "tips/gradient-accumulation/",
        "composer/",
        "benchmarks/",
        "zh/catalog/",
        "zh/tips/free-memory-empty-cache/",
        "zh/benchmarks/",
        "zh/",
        "lint/",
        "zh/lint/",
        "checklist/",
        "zh/checklist/",
        "problems/loss-is-nan/",
        "zh/tips/ddp-over-dataparallel/",
    ],
    ids=lambda p: p.strip("/").replace("/", "-") or "home",
)
def test_no_horizontal_overflow_at_390_px(browser, base_url: str, path: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(f"{base_url}/{path}")
        page.wait_for_load_state("load")
        width, client = page.evaluate(
            "[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]"
        )
        assert width <= client, f"/{path} is {width}px wide in a {client}px viewport"
        if path.endswith("catalog/"):  # the title column stays readable
            cell = page.locator("#tip-catalog tbody td:first-child").first.bounding_box()
            assert cell is not None and cell["width"] >= 150, cell
            table = page.locator("#tip-catalog").bounding_box()
            assert table is not None and table["x"] + table["width"] <= client + 1
    finally:
        context.close()


@pytest.mark.parametrize("lang_prefix", ["", "zh/"], ids=["en", "zh"])
def test_chart_labels_are_tip_titles_and_readable_on_a_phone(
    browser,
    base_url: str,
    lang_prefix: str,
) -> None:
    from generator.bench.results import load_all
    from generator.records.load import load_tips
    from generator.records.render import plain_text

    if "cpu" not in load_all():
        pytest.skip("no benchmark results: no chart")
    tips = load_tips()
    lang = "zh" if lang_prefix else "en"
    titles = [plain_text(t.title.get(lang)) for t in tips]
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(f"{base_url}/{lang_prefix}benchmarks/")
        labels = page.locator(".bench-row .bench-label a")
        texts = labels.all_inner_texts()
        assert texts, "no chart label on the benchmarks page"
        assert not {t.id for t in tips} & set(texts)
        for text in texts:
            assert any(text.startswith(title) for title in titles), text
        font = labels.first.evaluate("el => parseFloat(getComputedStyle(el).fontSize)")
        assert font >= 11, f"chart labels are {font}px on a phone"
        assert page.locator(".bench-chart").first.locator(".bench-key").count() >= 3  # legend
    finally:
        context.close()


# --- polish (issue 17): contrast, tables, Chinese typography, checklist, home, sitemap -------

CONTRAST_JS = """(selectors) => {
  function rgb(s) { const m = s.match(/[\\d.]+/g).map(Number); return m.length > 3 ? m : m.concat([1]); }
  function lum(c) {
    return c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
      .reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
  }
  function background(el) {  // the colours behind el, blended from the first opaque one up
    const stack = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) { stack.push(c); if (c[3] >= 1) break; }
    }
    let out = [255, 255, 255];
    for (const c of stack.reverse()) out = out.map((v, i) => v * (1 - c[3]) + c[i] * c[3]);
    return out;
  }
  const out = {};
  for (const s of selectors) {
    const el = document.querySelector(s);
    if (!el) { out[s] = null; continue; }
    const b = background(el), f = rgb(getComputedStyle(el).color);
    const fg = f.slice(0, 3).map((v, i) => v * f[3] + b[i] * (1 - f[3]));
    const [hi, lo] = [lum(fg), lum(b)].sort((x, y) => y - x);
    out[s] = (hi + 0.05) / (lo + 0.05);
  }
  return out;
}"""

#: What the review measured below 4.5:1 (links 2.78, header 2.78, category badges 2.38, dark
#: badges 4.41), and the other badges and labels of a tip page and of the search results.
CONTRAST_SELECTORS = [
    ".md-content .md-typeset p a:not(.headerlink)",
    ".md-header__topic .md-ellipsis",
    ".md-nav__link--active",
    ".tip-badge--category a",
    ".tip-badge--impact",
    ".tip-badge--runs-on",
    ".tip-badge--helps-on",
    ".tip-verified",
    ".md-search-result .tip-search-kind",
]


@pytest.mark.parametrize("scheme", ["default", "slate"], ids=["light", "dark"])
def test_text_contrast_is_at_least_4_5_to_1(browser, base_url: str, scheme: str) -> None:
    """WCAG contrast from the computed colours, in the light and the dark palette."""
    context = browser.new_context()
    index = 0 if scheme == "default" else 1
    palette = {"index": index, "color": {"scheme": scheme, "primary": "deep-orange"}}
    # Material keeps the chosen palette in local storage, under the site's scope.
    context.add_init_script(f"localStorage.setItem('/.__palette', '{json.dumps(palette)}')")
    try:
        page = context.new_page()
        low = {}
        for path in ("tips/ddp-over-dataparallel/", "zh/tips/ddp-over-dataparallel/"):
            page.goto(f"{base_url}/{path}")
            assert page.evaluate("document.body.dataset.mdColorScheme") == scheme
            page.locator("input.md-search__input").click()
            _results(page, "lint")  # the search results' labels
            ratios = page.evaluate(CONTRAST_JS, CONTRAST_SELECTORS)
            assert all(v is not None for v in ratios.values()), ratios
            low |= {f"{path} {s}": round(v, 2) for s, v in ratios.items() if v < 4.5}
        assert not low, low
    finally:
        context.close()


#: Breaks inside a Chinese word: two ideographs on either side of a line break.
MID_WORD_BREAKS_JS = """(selector) => {
  const cjk = /[\\u4e00-\\u9fff]/;
  const found = [];
  for (const cell of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    const chars = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (let i = 0; i < n.length; i++) {
        const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);
        const box = r.getClientRects()[0];
        if (box) chars.push([n.data[i], box.top]);
      }
    }
    for (let i = 1; i < chars.length; i++) {
      if (chars[i][1] > chars[i - 1][1] + 2 && cjk.test(chars[i][0]) && cjk.test(chars[i - 1][0]))
        found.push(cell.textContent.trim());
    }
  }
  return found;
}"""


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["1280x800", "390x844"])
def test_tables_fit_their_column_and_chinese_labels_keep_their_words(
    browser,
    base_url: str,
    viewport: tuple[int, int],
) -> None:
    width, height = viewport
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        for path in (
            "lint/",
            "zh/lint/",
            "catalog/",
            "zh/catalog/",
            "benchmarks/",
            "zh/benchmarks/",
        ):
            page.goto(f"{base_url}/{path}")
            tables = page.evaluate(
                """() => Array.from(document.querySelectorAll('.md-content table')).map(t => {
                    const box = t.closest('.md-typeset__scrollwrap') || t.parentElement;
                    return [t.getBoundingClientRect().width, box.clientWidth];
                })"""
            )
            assert tables, path
            # Every table fits its column on a desktop; on a phone, the lint and catalog
            # tables too (the benchmark tables scroll in their own box, not the page).
            if width > 1000 or "benchmarks" not in path:
                assert all(w <= box + 1 for w, box in tables), (path, tables)
            if path.startswith("zh/"):  # label cells; sentences wrap as Chinese does
                cells = {
                    # the rules table's (the exit codes' table above it holds sentences)
                    "lint": "h2#rules ~ .md-typeset__scrollwrap td:is(:nth-child(2), :nth-child(5))",
                    "catalog": "#tip-catalog td:not(:first-child)",
                    "benchmarks": ".bench-table td:nth-child(2)",
                }[path.split("/")[1]]
                breaks = page.evaluate(MID_WORD_BREAKS_JS, cells)
                assert not breaks, (path, breaks[:5])
        # The lint page's messages are no letter-by-letter column.
        page.goto(f"{base_url}/lint/")
        message = page.locator("h2#rules ~ .md-typeset__scrollwrap td:nth-child(3)").first
        assert (message.bounding_box() or {})["width"] >= (140 if width < 500 else 180)
    finally:
        context.close()


def test_home_tools_nav_typography_and_no_missing_sitemap(page: Page, base_url: str) -> None:
    """The Lint and Composer cards on the home page, the tools (the doctor too) and the
    checklist leading the navigation, card icons apart from their titles, no slanted Chinese,
    and no request that fails (Material fetched a per-language sitemap.xml that did not exist: a 404 per page)."""
    failed: list[str] = []
    page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
    for prefix in ("", "zh/"):
        page.goto(f"{base_url}/{prefix}")
        page.wait_for_load_state("networkidle")
        cards = page.locator(".tip-problems > ul > li")
        hrefs = [a.get_attribute("href") for a in cards.locator("a").all()]
        assert hrefs[:2] == ["composer/", "lint/"], hrefs  # first row: above the fold
        assert cards.first.bounding_box()["y"] < 800
        links = page.eval_on_selector_all(
            ".md-sidebar--primary a.md-nav__link[href]",
            "as => as.map(a => a.getAttribute('href')).filter(h => !h.includes('#'))",
        )
        assert links[1:6] == ["composer/", "lint/", "lint/playground/", "doctor/", "checklist/"], (
            links[:7]
        )
        gaps = page.evaluate(
            """() => Array.from(document.querySelectorAll('.grid.cards li > p:first-child'))
            .map(p => { const icon = p.querySelector('.twemoji'), title = p.querySelector('a');
                        return title.getBoundingClientRect().left - icon.getBoundingClientRect().right; })"""
        )
        assert gaps and min(gaps) >= 4, gaps
        styles = page.evaluate(
            "() => Array.from(document.querySelectorAll('.md-content em')).map(e => getComputedStyle(e).fontStyle)"
        )
        if prefix:
            assert styles and set(styles) == {"normal"}, styles
    page.goto(f"{base_url}/tips/gradient-accumulation/")
    page.goto(f"{base_url}/zh/catalog/")
    page.wait_for_load_state("networkidle")
    assert not failed, failed


def test_checklist_boxes_are_kept_in_local_storage(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/checklist/")
    boxes = page.locator(".tip-checklist input[type=checkbox]")
    assert boxes.count() >= 12
    why = page.locator(".tip-checklist a[aria-label]")
    assert (
        len(set(why.evaluate_all("as => as.map(a => a.getAttribute('aria-label'))")))
        == boxes.count()
    )
    expect(page.locator(".tip-checklist-reset")).to_be_hidden()
    boxes.nth(0).check()
    page.locator(".tip-checklist label").nth(2).click()  # the text toggles its box too
    expect(page.locator(".tip-checklist-status output")).to_have_text(
        f"2 of {boxes.count()} checked, kept in this browser"
    )
    page.reload()
    ticked = page.locator(".tip-checklist input:checked")
    assert [ticked.nth(i).get_attribute("data-check") for i in range(ticked.count())] == [
        boxes.nth(0).get_attribute("data-check"),
        boxes.nth(2).get_attribute("data-check"),
    ]
    page.goto(f"{base_url}/zh/checklist/")  # the same checks in the other language
    assert page.locator(".tip-checklist input:checked").count() == 2
    page.locator(".tip-checklist-reset").click()
    page.reload()
    assert page.locator(".tip-checklist input:checked").count() == 0
