"""The static site: strict build, both languages, every tip page, one search index per
language, no line break between Chinese characters, the home page's entry points, the
footer's licence and install line, and a Python API page without raw Sphinx roles."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generator import paths
from generator.records import cjk
from generator.records.render import plain_text
from generator.records.schema import Tip
from generator.records.snippets import snippet_path


def test_every_tip_has_a_page_in_both_languages(tips: list[Tip], built_site: Path) -> None:
    for tip in tips:
        en = built_site / "tips" / str(tip.id) / "index.html"
        zh = built_site / "zh" / "tips" / str(tip.id) / "index.html"
        assert en.exists() and zh.exists(), tip.id
        for path, title in ((en, tip.title.en), (zh, tip.title.zh)):
            html = path.read_text(encoding="utf-8").replace("&amp;", "&").replace("&#39;", "'")
            assert f"<title>{plain_text(title)} - " in html, (tip.id, title)


def test_links_use_the_public_address_or_none(built_site: Path) -> None:
    """Without $PYTORCH_TIPS_SITE_URL no page names a local server and there is no sitemap
    (its URLs must be absolute); with it, the sitemap lists the pages under that address."""
    base = paths.site_url()
    sitemap = built_site / "sitemap.xml"
    if base:
        assert f"<loc>{base}tips/gradient-accumulation/</loc>" in sitemap.read_text()
        return
    assert not sitemap.exists() and not (built_site / "sitemap.xml.gz").exists()
    local = re.compile(r'(?:href|src|content)="https?://(?:127\.0\.0\.1|localhost)[:/"]')
    pages = [p for p in built_site.rglob("*.html") if local.search(p.read_text("utf-8"))]
    assert not pages, pages[:5]


def test_snippet_downloads_resolve(tips: list[Tip], built_site: Path) -> None:
    for tip in tips:
        for name in tip.variants():
            served = built_site / "snippets" / str(tip.id) / f"{name}.py"
            assert served.read_text(encoding="utf-8") == snippet_path(str(tip.id), name).read_text(
                encoding="utf-8"
            )


def test_search_has_one_index_per_language_and_a_directory_of_its_pages(
    tips: list[Tip],
    built_site: Path,
) -> None:
    from generator.records.problems import load_entry_points

    entry_points = load_entry_points(frozenset(str(t.id) for t in tips))
    for lang, root in (("en", built_site), ("zh", built_site / "zh")):
        bundle = root / "pagefind"
        entry = json.loads((bundle / "pagefind-entry.json").read_text(encoding="utf-8"))
        assert list(entry["languages"]) == [lang], entry["languages"]
        directory = json.loads((bundle / "pages.json").read_text(encoding="utf-8"))
        pages = directory["pages"]
        # Every indexed page is in the directory, with its Pagefind id, and nothing else.
        assert entry["languages"][lang]["page_count"] == len(pages)
        assert all(p["id"] and (root / p["url"] / "index.html").exists() for p in pages)
        urls = {p["url"] for p in pages}
        assert {f"tips/{t.id}/" for t in tips} <= urls
        assert {f"problems/{slug}/" for slug in entry_points.problems} <= urls
        assert {f"{path}/" for path in entry_points.pages} | {"checklist/"} <= urls
        assert not urls & {"catalog/", "tags/", "benchmarks/", "glossary/", ""}
        assert "the" in directory["stop"] and directory["stop_zh"]
        kinds = {p["url"]: p["kind"] for p in pages}
        assert kinds["composer/"] == kinds["lint/"] == "tool"
        assert kinds["problems/out-of-memory/"] == "problem"
        # A code's own page is its rule's (the page that lists every rule does not claim it),
        # titled with its message in the page's language, summed up by its tip's title.
        lint = next(p for p in pages if p["url"] == "lint/")
        assert "PTT020" not in lint["words"]
        rule = next(p for p in pages if p["url"] == "lint/rules/PTT020/")
        assert rule["words"] == ["PTT020"] and rule["title"].startswith("PTT020")
        assert any("\u4e00" <= c <= "\u9fff" for c in rule["title"]) == (lang == "zh")
        assert rule["summary"] == next(t for t in tips if t.id == "avoid-cpu-gpu-syncs").title.get(
            lang
        )
        # How the CLI reads a query: its caps and the glossary's synonyms (梯度检查点).
        assert directory["max_chars"] > 0 and directory["max_terms"] > 0
        synonyms = {term for _, term, *_ in directory["synonyms"]}
        assert ("激活重计算" if lang == "zh" else "activation checkpointing") in synonyms
    assert not (built_site / "search" / "search_index.json").exists()  # no second engine
    tip = (built_site / "zh" / "tips" / "gradient-accumulation" / "index.html").read_text(
        encoding="utf-8"
    )
    assert 'data-pagefind-body data-pagefind-meta="kind:tip"' in tip
    assert '<span data-pagefind-meta="id">gradient accumulation</span>' in tip
    catalog = (built_site / "catalog" / "index.html").read_text(encoding="utf-8")
    assert "data-pagefind-body" not in catalog  # list pages stay out of the index
    for folder in (built_site, built_site / "zh"):
        rule = (folder / "lint" / "rules" / "PTT020" / "index.html").read_text(encoding="utf-8")
        assert 'data-pagefind-body data-pagefind-meta="kind:rule"' in rule
        assert "PTT020" in rule and "../../../tips/avoid-cpu-gpu-syncs/" in rule


def test_the_pages_of_tips_pages_yaml_carry_their_title(tips: list[Tip], built_site: Path) -> None:
    """tips/_pages.yaml repeats each page's H1 for the CLI's results: they must agree."""
    from generator.records.problems import load_entry_points

    pages = load_entry_points(frozenset(str(t.id) for t in tips)).pages
    for path, page in pages.items():
        for lang, prefix in (("en", ""), ("zh", "zh/")):
            html = (built_site / prefix / path / "index.html").read_text(encoding="utf-8")
            h1 = re.search(r"<h1[^>]*>(.*?)</h1>", html, re.S).group(1)
            text = re.sub(r"<[^>]+>", "", h1).replace("&para;", "").strip()
            assert text == page.title.get(lang), (path, lang, text)


_CJK_CHAR = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_CJK_BREAK = re.compile(f"[{_CJK_CHAR}][ \\t]*\\n\\s*[{_CJK_CHAR}]")


def _text_nodes(html: str) -> list[str]:
    """The text nodes of ``html`` outside <pre>, <code>, <script>, <style> and <textarea>."""
    from html.parser import HTMLParser

    class Collect(HTMLParser):
        skip = {"pre", "code", "script", "style", "textarea"}

        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.depth = 0
            self.nodes: list[str] = []

        def handle_starttag(self, tag: str, attrs: object) -> None:
            self.depth += tag in self.skip

        def handle_endtag(self, tag: str) -> None:
            self.depth -= tag in self.skip and self.depth > 0

        def handle_data(self, data: str) -> None:
            if not self.depth:
                self.nodes.append(data)

    parser = Collect()
    parser.feed(html)
    return parser.nodes


def test_no_line_break_between_chinese_characters(built_site: Path) -> None:
    """A newline between two Chinese characters renders as a space: the hook joins them."""
    found = []
    for page in sorted(built_site.rglob("*.html")):
        for node in _text_nodes(page.read_text(encoding="utf-8")):
            found += [f"{page.relative_to(built_site)}: {m!r}" for m in _CJK_BREAK.findall(node)]
    assert not found, f"{len(found)} breaks, e.g.\n" + "\n".join(found[:10])


def test_the_chinese_line_break_check_can_fail() -> None:
    nodes = _text_nodes("<p>适得其反，\n并附带</p><pre>代码\n注释</pre><p>显存\nCUDA</p>")
    assert [m for n in nodes for m in _CJK_BREAK.findall(n)] == ["，\n并"]


_INLINE = set("a abbr b code em i kbd mark small span strong sub sup".split())
_PUNCT = "、。，：；！？（）《》「」『』【】％"  # full-width punctuation, written out
#: A line break beside full-width punctuation, inside a run of inline text: rendered as a space.
_PUNCT_BREAK = re.compile(f"[{_PUNCT}][ \\t]*\\n\\s*(?=[^\\s])|(?<=[^\\s])[ \\t]*\\n\\s*[{_PUNCT}]")


def _inline_runs(html: str) -> list[str]:
    """The runs of inline text of ``html``, split at block tags; code counts as one character.

    Text inside <pre>, <script>, <style> and <textarea> is left out; an inline <code> element
    stands in its run as ``\\x00``, so a break between punctuation and code shows.
    """
    from html.parser import HTMLParser

    class Collect(HTMLParser):
        skip = {"pre", "code", "script", "style", "textarea"}

        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.depth = 0
            self.runs: list[list[str]] = [[]]

        def handle_starttag(self, tag: str, attrs: object) -> None:
            if tag == "code" and not self.depth:
                self.runs[-1].append("\x00")
            elif tag not in _INLINE:
                self.runs.append([])
            self.depth += tag in self.skip

        def handle_endtag(self, tag: str) -> None:
            self.depth -= tag in self.skip and self.depth > 0
            if tag not in _INLINE:
                self.runs.append([])

        def handle_data(self, data: str) -> None:
            if not self.depth:
                self.runs[-1].append(data)

    parser = Collect()
    parser.feed(html)
    return ["".join(run) for run in parser.runs]


def punctuation_breaks(html: str) -> list[str]:
    """Each line break of ``html`` that renders as a space beside full-width punctuation."""
    return [m.group(0) for run in _inline_runs(html) for m in _PUNCT_BREAK.finditer(run)]


def test_no_space_beside_full_width_punctuation_on_chinese_pages(built_site: Path) -> None:
    """A wrapped line after "。" or before "（" renders as a space ("float32。 autocast"), unless
    the hook joins it. Before `cjk.join_lines` joined these, the zh pages had 115 of them."""
    found = []
    for page in sorted((built_site / "zh").rglob("*.html")):
        breaks = punctuation_breaks(page.read_text(encoding="utf-8"))
        found += [f"{page.relative_to(built_site)}: {b!r}" for b in breaks]
    assert not found, f"{len(found)} breaks, e.g.\n" + "\n".join(found[:10])


def test_the_punctuation_break_check_can_fail() -> None:
    html = (
        "<p>保持 float32。\nautocast 不变，提速 10%\n（实测）</p>"
        "<p>如下：\n<code>x</code> 与 <code>y</code>\n（注）</p>"
        "<p>末尾。\n</p><p>显存\nCUDA</p><pre>代码。\n注释</pre>"
    )
    assert punctuation_breaks(html) == ["。\n", "\n（", "：\n", "\n（"]
    assert punctuation_breaks(cjk.join_lines(html)) == []


def test_api_page_sits_under_contributing_without_raw_roles(
    tips: list[Tip], built_site: Path
) -> None:
    from generator.site.pages import nav

    assert {"Contributing": ["contributing.md", "reference/api.md"]} in nav(tips)
    role = re.compile(r":(?:data|func|class|mod|meth|attr|exc|obj):")
    for page in ("reference/api/index.html", "zh/reference/api/index.html"):
        html = (built_site / page).read_text(encoding="utf-8")
        assert 'id="generator.records.load"' in html
        text = " ".join(_text_nodes(html))
        assert not role.findall(text), role.findall(text)[:5]


def test_every_page_shows_the_licence_and_the_install_line(built_site: Path) -> None:
    assert (
        (Path(__file__).parents[2] / "LICENSE")
        .read_text(encoding="utf-8")
        .startswith("MIT License")
    )
    for page in sorted(built_site.rglob("index.html")):
        if "pagefind" in page.parts:
            continue
        footer = page.read_text(encoding="utf-8").split('<div class="md-copyright">', 1)[1]
        assert "MIT" in footer and "<code>pip install -e .</code>" in footer, page
        assert re.search(r'href="[^"]*#get-it"', footer), page


def test_home_page_counts_the_tips_and_starts_from_problems(
    tips: list[Tip], built_site: Path
) -> None:
    from generator.records.problems import load_entry_points

    entry_points = load_entry_points(frozenset(str(t.id) for t in tips))
    for prefix, words in (("", f"{len(tips)} training tips"), ("zh/", f"{len(tips)} 条")):
        home = (built_site / prefix / "index.html").read_text(encoding="utf-8")
        assert words in home
        assert "<!--" not in home.split("<article", 1)[1].split("</article>", 1)[0]
        for slug, entry in entry_points.problems.items():
            assert f'href="problems/{slug}/"' in home, slug
            page = (built_site / prefix / "problems" / slug / "index.html").read_text(
                encoding="utf-8"
            )
            assert all(f'href="../../tips/{t}/"' in page for t in entry.tips), slug
        assert 'href="checklist/"' in home
        assert re.search(r"<a [^>]*data-search-open[^>]*>", home)  # the Search card is a link
        checklist = (built_site / prefix / "checklist" / "index.html").read_text(encoding="utf-8")
        links = re.findall(r'<li>.*?href="../tips/([^/]+)/"', checklist)
        assert links == [c.tip for c in entry_points.checklist.checks]


def test_the_three_multi_gpu_lists_say_what_they_hold(tips: list[Tip], built_site: Path) -> None:
    """Issue 27: the catalog's "Helps on: several GPUs" filter, the "Training on several GPUs"
    problem page and the "Distributed training" category hold different lists (every tip that
    pays off there, the ones to read first, the ones whose subject it is): each page says so,
    with its count, and the other two link the catalog's filter."""
    from generator.records.problems import load_entry_points

    problem = load_entry_points(frozenset(str(t.id) for t in tips)).problems["several-gpus"]
    helping = sum("multi-gpu" in t.hardware.helps_on for t in tips)
    category = sum(t.category == "distributed" for t in tips)
    assert problem.helps == "multi-gpu" and len(problem.tips) < helping and category < helping
    link = 'href="../../catalog/?helps=multi-gpu"'
    for prefix, read_first, whose, everything in (
        (
            "",
            f"These {len(problem.tips)} are the tips to read first",
            f"The {category} tips whose",
            "whatever its category",
        ),
        (
            "zh/",
            f"这 {len(problem.tips)} 条是最该先读的技巧",
            f"以本分类为主题的 {category} 条",
            "不论分类",
        ),
    ):
        page = (built_site / prefix / "problems/several-gpus/index.html").read_text("utf-8")
        assert read_first in page and f" {helping} " in page and link in page, prefix
        page = (built_site / prefix / "categories/distributed/index.html").read_text("utf-8")
        assert whose in page and f" {helping} " in page and link in page, prefix
        catalog = (built_site / prefix / "catalog/index.html").read_text("utf-8")
        assert everything in catalog, prefix


def test_pages_load_nothing_from_other_hosts(built_site: Path) -> None:
    pattern = re.compile(
        r"<(?:script|link|img|iframe)[^>]+(?:src|href)=\"(https?:)?//(?!127\.0\.0\.1)"
    )
    for html in built_site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        bad = [m.group(0) for m in pattern.finditer(text)]
        assert not bad, f"{html}: {bad[:3]}"


# --- UI strings: one bilingual data file -----------------------------------------------------

_STATIC_REFS = (
    re.compile(r"\bL\.([a-z_][a-z0-9_]*)"),  # templates: L.measured
    re.compile(r"\bL\[\s*\"([a-z_][a-z0-9_]*)\"\s*\]"),  # templates and code: L["measured"]
)
_DYNAMIC_PREFIX = re.compile(r"\bL\[\s*\"([a-z_]+_)\"\s*[~+]")  # L["tested_" ~ device]


def _ui_sources() -> dict[str, str]:
    from generator import paths

    files = sorted((paths.TEMPLATES / "site").rglob("*.j2")) + [paths.TEMPLATES / "show.txt.j2"]
    files += sorted((paths.TEMPLATES / "doctor").rglob("*.j2"))  # the doctor's HTML report
    files += sorted(paths.TEMPLATES.parent.rglob("*.py"))  # every module that may read a label
    files += sorted((paths.ROOT / "overrides").rglob("*.html"))  # theme overrides: the footer
    return {str(p): p.read_text(encoding="utf-8") for p in files}


def test_every_ui_label_has_both_languages_and_the_same_placeholders() -> None:
    import yaml

    from generator.records import ui

    raw = yaml.safe_load(ui.UI_FILE.read_text(encoding="utf-8"))
    assert raw and all(set(texts) == {"en", "zh"} for texts in raw.values()), [
        k for k, texts in raw.items() if set(texts) != {"en", "zh"}
    ]
    labels = ui.labels()
    assert set(labels["en"]) == set(labels["zh"]) == set(raw)
    for key in raw:
        assert ui.placeholders(labels["en"][key]) == ui.placeholders(labels["zh"][key]), key
    cjk = re.compile(r"[\u4e00-\u9fff]")
    untranslated = [
        k
        for k in raw
        if labels["en"][k] == labels["zh"][k] and re.search("[a-z]{4}", labels["en"][k])
    ]
    assert untranslated == [], "same text in both languages: " + ", ".join(untranslated)
    assert any(cjk.search(text) for text in labels["zh"].values())


def test_every_ui_label_used_exists_and_every_label_is_used() -> None:
    from generator.bench.results import REGIME_ORDER
    from generator.records import ui
    from generator.records.taxonomy import DEVICES

    keys = set(ui.labels()["en"])
    sources = _ui_sources()
    used: set[str] = set()
    prefixes: set[str] = set()
    for text in sources.values():
        for pattern in _STATIC_REFS:
            used |= set(pattern.findall(text))
        prefixes |= set(_DYNAMIC_PREFIX.findall(text))
    # The dynamic lookups, expanded over their vocabularies.
    used |= {"tested_" + d.replace("-", "_") for d in DEVICES}
    used |= {"kind_time", "kind_memory", "device_name_cpu", "device_name_cuda"}
    used |= {"regime_" + r.replace("-", "_") for r in REGIME_ORDER if r != "default"}
    # The lint's lines, L[f"lint_err_{key}"]: a key is used where the lint's code names it.
    lint = "".join(text for path, text in sources.items() if "/lint/" in path)
    used |= {f"lint_err_{k}" for k in re.findall(r"\"([a-z_]+)\"", lint)} & keys
    assert prefixes >= {"tested_", "kind_", "regime_", "device_name_", "coverage_", "composer_"}, (
        prefixes
    )
    missing = sorted(k for k in used if k not in keys and not k.startswith("coverage_"))
    assert missing == [], "used but not in generator/templates/site/ui.yaml: " + ", ".join(missing)
    code = "".join(text for path, text in sources.items() if path.endswith(".py"))
    literals = set(re.findall(r"\"([a-z_][a-z0-9_]*)\"(?!\s*:)", code))  # not dict keys
    unused = sorted(
        k for k in keys if k not in used and k not in literals and not k.startswith(tuple(prefixes))
    )
    assert unused == [], "labels nothing uses: " + ", ".join(unused)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("key:\n  en: Hello\n", "give exactly the languages en, zh"),
        ("key:\n  en: Hello\n  zh: ''\n", "must be a non-empty string"),
        ("key:\n  en: '{n} tips'\n  zh: 条技巧\n", "different {placeholders}"),
        ("- a list\n", "expected a mapping"),
    ],
    ids=["missing-zh", "empty-zh", "placeholder", "not-a-mapping"],
)
def test_a_broken_ui_file_fails_in_one_line(tmp_path: Path, text: str, reason: str) -> None:
    from generator.errors import UserError
    from generator.records import ui

    path = tmp_path / "ui.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=re.escape(reason)):
        ui.read_labels(path)


def test_built_pages_show_runs_on_and_helps_on_badges(tips: list[Tip], built_site: Path) -> None:
    by_id = {t.id: t for t in tips}
    gpu_only = [t for t in tips if "cpu" in t.hardware.devices and "cpu" not in t.hardware.helps_on]
    assert gpu_only, "expected tips tested on CPU that pay off on a GPU only (TF32, ...)"
    for tip in gpu_only:
        html = (built_site / "tips" / str(tip.id) / "index.html").read_text(encoding="utf-8")
        helps = re.search(r'tip-badge--helps-on"[^>]*>([^<]*)<', html)
        runs = re.search(r'tip-badge--runs-on"[^>]*>([^<]*)<', html)
        assert helps and runs, tip.id
        assert "CPU" in runs.group(1) and "CPU" not in helps.group(1), tip.id
    # An advice-only tip ran nowhere: its badge says where the advice applies, not "Runs on".
    from generator.records import ui

    label = ui.labels()["en"]
    advice = [t for t in tips if not t.variants()]
    assert advice, "expected advice-only tips"
    for tip in advice:
        html = (built_site / "tips" / str(tip.id) / "index.html").read_text(encoding="utf-8")
        runs = re.search(r'tip-badge--runs-on" title="([^"]*)">([^<]*)<', html)
        assert runs and runs.group(2).startswith(label["applies_to"]), tip.id
        assert runs.group(1) == label["applies_to_title"], tip.id
    coded = (built_site / "tips" / "gradient-accumulation" / "index.html").read_text("utf-8")
    assert f'tip-badge--runs-on" title="{label["runs_on_title"]}">{label["runs_on"]}' in coded
    catalog = (built_site / "catalog" / "index.html").read_text(encoding="utf-8")
    multi = re.findall(
        r'data-helps="[^"]*multi-gpu[^"]*"[^>]*>\s*<td><a href="../tips/([^/]+)/', catalog
    )
    assert multi and all("multi-gpu" in by_id[i].hardware.helps_on for i in multi)


# --- tip pages and the catalog, as rendered Markdown (issue 12) ------------------------------


def test_tip_pages_put_the_after_code_first_and_all_caveats_in_one_box(tips: list[Tip]) -> None:
    from generator.site.pages import LABELS, code_diff, tip_page

    for tip in tips:
        for lang in ("en", "zh"):
            L = LABELS[lang]
            page = tip_page(tip, lang, tips, {})
            tabs = re.findall(r'^=== "(.+)"$', page, re.M)
            if tip.after is not None:
                assert page.index("{ #code }") < page.index("{ #why }"), tip.id
                expected = [L["after"], L["changes"], L["before"]] if tip.before else [L["after"]]
                assert tabs == expected, (tip.id, lang)
            boxes = re.findall(r'^!!! warning "(.+)"$', page, re.M)
            assert boxes.count(L["caveats"]) == (1 if tip.caveats else 0), (tip.id, lang)
            assert 'Caveat"' not in page and "{ #caveats }" not in page
            for caveat in tip.caveats:  # each one an item of that one list
                first = caveat.get(lang).strip().splitlines()[0]
                assert f"\n    - {first}\n" in page, (tip.id, lang, first)
        diff = code_diff(tip)
        if tip.before is not None and tip.after is not None:
            assert diff is not None and diff.startswith("--- before.py\n+++ after.py\n")
            added = [ln[1:] for ln in diff.splitlines()[2:] if ln.startswith("+")]
            removed = [ln[1:] for ln in diff.splitlines()[2:] if ln.startswith("-")]
            assert set(added) <= set(tip.after.code.splitlines()), tip.id
            assert set(removed) <= set(tip.before.code.splitlines()), tip.id
            assert added or removed, tip.id
        else:
            assert diff is None


def test_catalog_is_an_unclassed_table_sorted_by_title_with_inline_code(tips: list[Tip]) -> None:
    import html

    from generator.site.pages import catalog_page

    for lang in ("en", "zh"):
        page = catalog_page(tips, lang)
        # No class on the table: Material styles it exactly like a Markdown table.
        assert '<table id="tip-catalog">' in page
        cells = re.findall(r'<td><a href="../tips/[a-z0-9-]+/">(.*?)</a></td>', page)
        assert len(cells) == len(tips)
        plain = [html.unescape(re.sub(r"</?code>", "", c)) for c in cells]
        assert plain == sorted(plain, key=str.casefold), lang
        assert not any("`" in c for c in cells), "raw backticks in a catalog title"
        if lang == "en":
            assert any("<code>" in c for c in cells)
        for needle in ('id="filter-text"', 'id="catalog-empty"', 'id="catalog-reset"'):
            assert needle in page
        assert '<div class="tip-filters" id="tip-filters">' in page and "markdown>" not in page


def test_no_raw_backticks_in_titles_navigation_or_header(built_site: Path) -> None:
    """A tip title's code spans are formatted in its H1, and plain text in the browser tab, the
    sticky header and the navigation (the review counted raw backticks in 11 titles per
    language)."""
    pages = sorted(built_site.rglob("index.html"))
    assert len(pages) > 200
    seen = 0
    for path in pages:
        html = path.read_text(encoding="utf-8")
        title = re.search(r"<title>(.*?)</title>", html, re.S)
        texts = [title.group(1)] if title else []
        texts += re.findall(r'<span class="md-ellipsis">(.*?)</span>', html, re.S)
        seen += len(texts)
        raw = [t.strip() for t in texts if "`" in t]
        assert not raw, (str(path.relative_to(built_site)), raw[:3])
    assert seen > 10_000  # the navigation of every page was read


def test_tip_pages_link_the_composer_resume_and_several_machines(built_site: Path) -> None:
    ddp = (built_site / "tips" / "ddp-over-dataparallel" / "index.html").read_text(encoding="utf-8")
    section = ddp[ddp.index('id="compose"') :]
    assert 'href="../../composer/"' in section  # "The composer applies this tip"
    assert 'href="../../composer/#multi-node"' in section  # one click to torchrun/SLURM
    for tip, resume in (
        ("save-load-state-dict", True),
        ("exact-data-resume", True),
        ("tf32-matmul", False),
    ):
        for prefix in ("", "zh/"):
            html = (built_site / prefix / "tips" / tip / "index.html").read_text(encoding="utf-8")
            assert ('href="../../composer/#script"' in html and "--resume" in html) == resume, tip
    always = (built_site / "tips" / "zero-grad-set-to-none" / "index.html").read_text(
        encoding="utf-8"
    )
    assert "applies this tip in every" in always
