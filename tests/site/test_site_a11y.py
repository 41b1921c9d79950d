"""The site's main pages in Chromium: no serious or critical accessibility fault (axe-core, on
a desktop and a phone screen, in English and Chinese), and a change of language that keeps
the address's state. The two tool pages are checked the same way in test_tools.py, where
their runtime is already loaded. Needs Debian's Chromium, like test_site.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.site.browser import require_chromium

require_chromium()

#: The pages checked here, by what they are (the composer and the playground: test_tools.py).
PAGES = {
    "home": "",
    "catalog": "catalog/",
    "tip": "tips/activation-checkpointing/",
    "problem": "problems/out-of-memory/",
    "lint": "lint/",
}
SCREENS = {"desktop": (1280, 900), "phone": (390, 844)}


@pytest.fixture(scope="module")
def context(browser: Any) -> Iterator[Any]:
    """A browser context that never loads the tools' runtime (not what is checked here)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.route("**/assets/pyodide/**", lambda route: route.abort())
    yield ctx
    ctx.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_main_pages_have_no_serious_accessibility_fault(
    context: Any, base_url: str, lang: str
) -> None:
    from tests.site.axe import violations

    page = context.new_page()
    prefix = f"{base_url}/{'zh/' if lang == 'zh' else ''}"
    found = {}
    for name, path in PAGES.items():
        page.goto(prefix + path)
        for screen, (width, height) in SCREENS.items():
            page.set_viewport_size({"width": width, "height": height})
            found[f"{name} {screen}"] = violations(page)
    # The search box open, with results and their count.
    page.goto(prefix + "?q=out+of+memory")
    page.wait_for_selector(".md-search-result__list li")
    found["search results desktop"] = violations(page)
    page.close()
    assert not any(found.values()), "\n".join(f"{k}: {v}" for k, v in found.items() if v)


@pytest.mark.parametrize(
    ("path", "state"),
    [
        ("composer/", "?model=gpt&fsdp"),
        ("catalog/", "?helps=multi-gpu"),
        ("lint/playground/", "#code=eJwrzs9JLS3JzM+zUlAqSc0rBgAn3QTn&name=mine.py"),
    ],
)
def test_the_language_switch_keeps_the_query_and_the_fragment(
    context: Any, base_url: str, path: str, state: str
) -> None:
    page = context.new_page()
    page.goto(f"{base_url}/{path}{state}")
    for lang, prefix in (("zh", "/zh/"), ("en", "/")):  # there and back
        with page.expect_navigation():
            page.evaluate(f"document.querySelector('a.md-select__link[hreflang={lang}]').click()")
        here = page.evaluate("[location.pathname, location.search + location.hash]")
        assert here == [prefix + path, state], here
        if path == "composer/":  # the form reads the flags on either page
            assert page.is_checked("#flag-fsdp")
            assert page.eval_on_selector("input[name=model]:checked", "e => e.value") == "gpt"
        if path == "catalog/":
            assert page.eval_on_selector("select[data-filter=helps]", "e => e.value") == "multi-gpu"
    page.close()
