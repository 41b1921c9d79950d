"""The built site in a real browser: search (English, Chinese, API names), language switcher,
code tabs and copy buttons, catalog filters, and no request leaving 127.0.0.1.

Needs Debian's Chromium (`apt-get install chromium fonts-wqy-microhei`). Without it these tests
are skipped with that reason, except under CI (CI=true), where a missing browser is a failure.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
HAVE_CHROMIUM = Path(CHROMIUM).exists()
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

if not HAVE_CHROMIUM:
    reason = "Chromium not found at /usr/bin/chromium: apt-get install chromium fonts-wqy-microhei"
    if os.environ.get("CI"):
        pytest.fail(f"browser tests are mandatory in CI: {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}", allow_module_level=True)

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def base_url(built_site: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, base_url: str) -> Iterator[Page]:  # noqa: ANN001
    context = browser.new_context()
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    yield pg
    context.close()


def _search(page: Page, base_url: str, query: str, lang_prefix: str = "") -> list[str]:
    page.goto(f"{base_url}/{lang_prefix}")
    box = page.locator("input.md-search__input")
    box.click()
    box.press_sequentially(query)
    box.press("End")  # CJK input fires no keyup; Material's search listens for keyup
    results = page.locator(".md-search-result__item > a")
    expect(results.first).to_be_visible()
    return [results.nth(i).get_attribute("href") or "" for i in range(min(results.count(), 5))]


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
    if lang_prefix:
        assert all("/zh/" in h or h.startswith("../") or "zh/" in h for h in hrefs), hrefs


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
    assert tabs.count() == 2
    blocks = page.locator(".tabbed-block")
    tabs.nth(1).click()
    expect(blocks.nth(1)).to_be_visible()
    expect(blocks.nth(0)).to_be_hidden()
    tabs.nth(0).click()
    expect(blocks.nth(0)).to_be_visible()
    code_blocks = page.locator("div.highlight")
    assert code_blocks.count() >= 2
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
