"""What the search index holds (generator/site/search.py) and the Chinese line joining
(generator/records/cjk.py), on small HTML, without building the site."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.records import cjk
from generator.records.load import get_tip
from generator.site import search as sitesearch

TIP_HTML = (
    '<h1 id="t">Title</h1>\n<p class="tip-summary">Summary</p>\n'
    '<h2 id="why">Why</h2>\n<p>Use <code>torch.no_grad()</code> here.</p>\n'
    '<h2 id="measured">Measured</h2>\n<p>Timed with torch.utils.benchmark.</p>\n'
    '<h2 id="tested-on">Tested on</h2>\n<p>Boilerplate every page has.</p>\n'
    '<h2 id="sources">Sources</h2>\n<ul><li>A source</li></ul>\n'
    '<h2 id="related">Related tips</h2>\n<ul><li>Another tip\'s title</li></ul>\n'
)


@pytest.mark.parametrize(
    ("src", "kind"),
    [
        ("tips/channels-last.md", "tip"),
        ("tips/channels-last.zh.md", "tip"),
        ("usage.zh.md", "guide"),
        ("problems/out-of-memory.md", "problem"),
        ("checklist.md", "guide"),
        ("composer.md", "tool"),
        ("lint.zh.md", "tool"),
        ("lint/playground/index.md", "tool"),  # a page nobody listed is indexed too
        ("doctor.md", "tool"),
        ("doctor.zh.md", "tool"),
        ("lint/rules/PTT020.md", "rule"),
        ("catalog.md", None),
        ("tags.zh.md", None),
        ("categories/memory.md", None),
        ("reference/api.md", None),
        ("index.md", None),
    ],
)
def test_which_pages_are_indexed(src: str, kind: str | None) -> None:
    assert sitesearch.page_kind(src) == kind
    html = sitesearch.mark_page("<p>x</p>", src, "en")
    assert ("data-pagefind-body" in html) == (kind is not None)
    if kind:
        assert f'<span data-pagefind-meta="kind">{kind}</span>' in html


def test_a_rule_page_is_known_by_its_code() -> None:
    assert sitesearch.rule_code("lint/rules/ptt020.zh.md") == "PTT020"
    assert sitesearch.rule_code("lint/rules/PTT020/index.md") == "PTT020"
    assert sitesearch.rule_code("lint.md") is None
    assert sitesearch.page_key("lint/playground/index.zh.md") == "lint/playground"


def test_a_tip_page_leaves_boilerplate_out_and_carries_its_metadata() -> None:
    html = sitesearch.mark_page(
        TIP_HTML,
        "tips/x.md",
        "en",
        summary="Use `no_grad` *and* [this](https://x.org)",
        keywords=["DDP", "multi-GPU"],
        tip_id="zero-grad-set-to-none",
    )
    assert html.startswith('<div data-pagefind-body data-pagefind-meta="kind:tip">')
    ignored = re.findall(r"<div data-pagefind-ignore>(.*?)</div>", html, re.S)
    assert [re.search(r'<h2 id="([^"]+)"', part).group(1) for part in ignored[:3]] == [
        "measured",
        "tested-on",
        "related",
    ]
    assert "Boilerplate" in ignored[1] and "Another tip" in ignored[2]
    assert "A source" not in "".join(ignored)  # the sources stay indexed
    # The summary is plain text: no backticks, emphasis or link targets.
    assert '<span data-pagefind-meta="summary">Use no_grad and this</span>' in html
    assert '<span data-pagefind-meta="keywords">DDP; multi-GPU</span>' in html
    assert '<span data-pagefind-meta="id">zero grad set to none</span>' in html
    assert "<div hidden><p>DDP</p><p>multi-GPU</p></div>" in html  # keywords as text too
    # torch.no_grad() is one word to Pagefind ("torchno_grad"): its parts are indexed too.
    hidden = re.search(r'<div hidden data-pagefind-weight="0.5">(.*?)</div>', html).group(1)
    assert "torch no_grad" in hidden
    assert "benchmark" not in hidden  # nothing from an ignored section


def test_the_other_spelling_is_indexed() -> None:
    html = sitesearch.mark_page("<p>Low GPU utilisation.</p>", "usage.md", "en")
    assert "utilization" in re.search(r'data-pagefind-weight="0.5">(.*?)</div>', html).group(1)


def test_a_chinese_page_also_indexes_its_characters_one_by_one() -> None:
    html = sitesearch.mark_page("<p>显存不足</p><pre>代码</pre>", "usage.zh.md", "zh")
    assert '<div hidden data-pagefind-weight="0.5">显 存 不 足</div>' in html
    assert "代 码" not in html


def test_tip_keywords_name_tags_and_problems_not_glossary_variants() -> None:
    tip = get_tip("gradient-accumulation")
    en = sitesearch.tip_keywords(tip, "en", ["Out of GPU memory"])
    assert "gradient accumulation" in en and "Out of GPU memory" in en
    zh = sitesearch.tip_keywords(tip, "zh")
    assert "梯度累积" in zh  # the tag
    # A variant the glossary avoids is read as the term on the query's side
    # (generator/records/query.py), as in the CLI: its characters would match other pages.
    assert "梯度累加" not in zh


def test_the_index_glob_covers_a_language_folder_and_not_the_other(tmp_path: Path) -> None:
    for name in ("tips", "problems", "lint", "composer", "zh", "assets", "pagefind"):
        (tmp_path / name).mkdir()
    glob = sitesearch.indexed_glob(tmp_path)
    assert glob == "{composer,lint,problems,tips}/**/*.html"


def test_the_page_directory_holds_own_words_keywords_and_other_spellings() -> None:
    entry = sitesearch.directory_entry(
        "problems/slow-training/",
        "Training is `slow`",
        "problem",
        words=["GPU utilization"],
        summary="Profile *first*.",
        keywords=["throughput"],
        lead=["slow training"],
    )
    assert entry == {
        "url": "problems/slow-training/",
        "title": "Training is slow",
        "kind": "problem",
        "words": ["GPU utilization", "GPU utilisation"],
        "keys": ["throughput"],
        "lead": ["slow training"],
        "summary": "Profile first.",
    }


@pytest.mark.parametrize(
    ("html", "joined"),
    [
        ("适得其反，\n并附带", "适得其反，并附带"),
        ("<a>显存</a>\n  不足", "<a>显存</a>不足"),
        ("中文。</p>\n<p>新段", "中文。</p><p>新段"),
        ("显存\nCUDA", "显存\nCUDA"),  # Chinese next to Latin keeps its space
        ("“quote”\n“quote”", "“quote”\n“quote”"),  # quotation marks alone do not join
        ("<pre>代码\n注释</pre>", "<pre>代码\n注释</pre>"),
        ("<code>中\n文</code>", "<code>中\n文</code>"),
        ("<!-- 注\n释 -->", "<!-- 注\n释 -->"),
        ('<a title="中\n文">x</a>', '<a title="中文">x</a>'),  # a tooltip renders it too
        # Full-width punctuation takes no space on either side, whatever the other side is.
        ("保持 float32。\nautocast 不", "保持 float32。autocast 不"),
        ("提速 10%\n（实测", "提速 10%（实测"),
        ("如下：\n<code>x = 1</code> 即可", "如下：<code>x = 1</code> 即可"),
        ("调用 <code>f()</code>\n（见下文）", "调用 <code>f()</code>（见下文）"),
        ("<a>链接</a>，\n  <em>x</em>", "<a>链接</a>，<em>x</em>"),
        ("中文\n<code>x</code>", "中文\n<code>x</code>"),  # Chinese next to code keeps its space
        ("two\nwords", "two\nwords"),  # Latin next to Latin too
        ("<pre>一。\nx</pre>", "<pre>一。\nx</pre>"),
        # A space with no newline between tags is the writer's: a card's icon and its title.
        (
            "条</p>\n<li><span><svg>\n</svg></span> <b>训",
            "条</p><li><span><svg></svg></span> <b>训",
        ),
    ],
    ids=[
        "punctuation",
        "across-tags",
        "blocks",
        "latin",
        "quotes",
        "pre",
        "code",
        "comment",
        "attr",
        "punctuation-then-latin",
        "percent-then-bracket",
        "punctuation-then-code",
        "code-then-bracket",
        "punctuation-then-tags",
        "chinese-then-code",
        "latin-latin",
        "pre-punctuation",
        "icon-space",
    ],
)
def test_chinese_lines_are_joined_outside_code(html: str, joined: str) -> None:
    assert cjk.join_lines(html) == joined


def test_join_lines_refuses_html_with_its_placeholder() -> None:
    with pytest.raises(ValueError, match="NUL"):
        cjk.join_lines("a\x00b")
