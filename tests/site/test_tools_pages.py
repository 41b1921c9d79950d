"""The tool pages' HTML (generator/site/tools.py), without a browser: the composer's form is
read from an argument parser, a second model needs no code, and the playground links rule
pages where the site has them."""

from __future__ import annotations

import argparse
import html
import re

import pytest

from generator import paths
from generator.compose.browser import compose_flags
from generator.compose.script import read_tips_by_feature
from generator.records.render import plain_text
from generator.site import tools


@pytest.fixture(scope="module")
def tips() -> list:
    from generator.records.load import load_tips

    return load_tips()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--model", choices=("conv", "gpt"), default="conv", help="which model")
    parser.add_argument("--amp", action="store_true", help="mixed precision")
    parser.add_argument(
        "--amp-dtype", choices=("auto", "bf16"), help="dtype (default: %(default)s)"
    )
    parser.add_argument("--accum", type=int, metavar="N", help="micro-batches")
    parser.add_argument("--clip", type=float, metavar="X", help="norm")
    parser.add_argument("-o", "--output", metavar="PATH", help="write here")
    parser.add_argument("--force", action="store_true", help="overwrite")
    return parser


def test_one_control_per_flag_read_from_the_parser() -> None:
    form = tools.controls(
        {"amp": ["autocast-mixed-precision"]},
        {"autocast-mixed-precision": "AMP"},
        _parser(),
        features={"amp": ["amp"]},
    )
    by_name = {c.name: c for c in form}
    assert list(by_name) == ["model", "amp", "amp-dtype", "accum", "clip"]  # no output file
    model = by_name["model"]  # a second model is one more choice: no code for it
    assert (model.kind, model.choices, model.default) == ("choice", ("conv", "gpt"), "conv")
    assert (by_name["amp"].kind, by_name["amp"].tips) == (
        "switch",
        (("autocast-mixed-precision", "AMP"),),
    )
    assert (by_name["amp-dtype"].kind, by_name["amp-dtype"].default) == ("choice", None)
    assert by_name["amp-dtype"].help == "dtype (default: None)"  # as --help prints it
    assert (by_name["accum"].kind, by_name["accum"].step, by_name["accum"].metavar) == (
        "number",
        "1",
        "N",
    )
    assert by_name["clip"].step == "any"


def test_each_composer_flag_names_the_tips_of_its_features() -> None:
    """Each control links the tips its flag applies, as ``compose --help`` names them (the
    form once read a ``feature`` attribute the flags no longer set, and linked none)."""
    from generator.compose.options import OPTIONS

    cites = read_tips_by_feature()
    form = {c.name: c for c in tools.controls(cites, {})}
    for option in OPTIONS:
        features = sorted({f.name for f in option.features})
        wanted = list(dict.fromkeys(t for f in features for t in cites.get(f, ())))
        assert [t for t, _ in form[option.flag[2:]].tips] == wanted, option.name
    assert form["amp"].tips and form["ddp"].tips


def test_the_composer_form_has_the_command_s_flags_and_starts_with_its_plain_script(
    tips: list,
) -> None:
    cites = read_tips_by_feature()
    page = tools.composer_tool("zh", "zh/composer/", cites, tips)
    flags = re.findall(r'data-flag="([^"]+)"', page)
    assert flags == [c.name for c in tools.controls(cites, {})]
    assert "output" not in flags and "amp" in flags
    script = re.search(r'<code id="compose-output"[^>]*>(.*?)</code>', page, re.S).group(1)
    assert html.unescape(script) == compose_flags([])["text"]
    tip_links = set(re.findall(r'href="\.\./tips/([^/]+)/"', page))
    assert tip_links and tip_links <= {t for ids in cites.values() for t in ids}
    assert "\n\n" not in page.split("<pre")[0]  # no blank line: Markdown keeps the HTML as is


def test_the_composer_page_has_jump_links_to_the_tool_and_every_section(tips: list) -> None:
    """The composer page is long (the form, then the script, then the sections): links at its
    top lead to the form, the script and each ``##`` section of the page's Markdown; a flag
    that takes an optional value says which (``data-const``), as the command reads it bare."""
    cites = read_tips_by_feature()
    for lang, source in (("en", "composer.md"), ("zh", "composer.zh.md")):
        markdown = (paths.DOCS / source).read_text(encoding="utf-8")
        url = f"{'zh/' if lang == 'zh' else ''}composer/"
        page = tools.expand_markers(markdown, url, lang, "tools-0.zip", cites, tips)
        nav = re.search(r'<nav class="compose-jump"[^>]*>(.*?)</nav>', page, re.S)
        assert nav is not None, lang
        targets = re.findall(r'href="#([^"]+)"', nav.group(1))
        sections = re.findall(r"^## .+? \{ #([\w-]+) \}", markdown, re.M)
        assert len(sections) >= 5 and targets == ["compose-form", "compose-result", *sections]
        for target in ("compose-form", "compose-result", "compose-to-script"):
            assert f'id="{target}"' in page
    consts = dict(re.findall(r'data-flag="([^"]+)"[^>]*data-const="([^"]+)"', page))
    assert consts == {c.name: c.const for c in tools.controls(cites, {}) if c.const}
    assert consts.get("activation-checkpointing") == "full"


def test_the_chinese_composer_explains_each_flag_in_chinese(tips: list) -> None:
    """The zh page's flag help is the options' Chinese text, with --help's notes (the model a
    flag is limited to, a choice's default) in Chinese; the en page's is --help's own."""
    from generator.compose.options import OPTIONS

    cites = read_tips_by_feature()
    for lang in ("zh", "en"):
        page = tools.composer_tool(lang, f"{'zh/' if lang == 'zh' else ''}composer/", cites, tips)
        helps = dict(re.findall(r'<p class="compose-flag__help" id="help-([^"]+)">(.*?)</p>', page))
        flags = [c.name for c in tools.controls(cites, {})]
        assert list(helps) == flags
        chinese = [f for f, text in helps.items() if re.search("[\u4e00-\u9fff]", text)]
        assert chinese == (flags if lang == "zh" else []), lang
    zh = tools.option_helps("zh")
    gpt_only = next(o for o in OPTIONS if tuple(o.models) == ("gpt",))
    assert zh[gpt_only.name].endswith("（仅适用于 gpt）"), zh[gpt_only.name]
    model = next(o for o in OPTIONS if o.name == "model")
    assert zh["model"].endswith(f"（默认：{model.default}）"), zh["model"]


def test_the_playground_links_a_rule_page_only_where_the_site_has_one(tips: list) -> None:
    """The rule page's path is generator.lint.report.rule_path's, the one of the SARIF helpUri
    and of ``--list-rules``: ``lint/rules/PTT011/`` (upper case), from the language's root."""
    from generator.lint.docs import RULE_DIR, rule_pages
    from generator.lint.report import rule_path

    assert rule_path("PTT011") == "lint/rules/PTT011/"
    page = paths.DOCS / RULE_DIR / "PTT011.md"
    assert f"{RULE_DIR}/PTT011.md" in rule_pages("en", tips)  # the page the site generates
    tip = next(t for t in tips if t.id == "save-load-state-dict")
    for lang in ("en", "zh"):  # from the root of each language: the pages in that language
        linked = tools.rule_table(lang, tips, "../../", {page})
        assert linked["PTT011"]["page"] == "../../lint/rules/PTT011/"
        assert linked["PTT011"]["url"] == "../../tips/save-load-state-dict/"
        assert linked["PTT011"]["title"] == plain_text(tip.title.get(lang))
    if not page.is_file():
        assert "page" not in tools.rule_table("en", tips, "../../")["PTT011"]


def test_the_runtime_tags_point_at_the_site_root_from_each_page() -> None:
    en = tools.runtime_tags("lint", "lint/playground/", "tools-0123456789ab.zip")
    zh = tools.runtime_tags("compose", "zh/composer/", "tools-0123456789ab.zip")
    assert 'src="../../assets/tools/lint.js"' in en and 'data-entry="generator.lint.browser"' in en
    assert 'src="../../assets/tools/compose.js"' in zh
    assert 'data-bundle="../../assets/tools/tools-0123456789ab.zip"' in zh
    assert f'data-pyodide="../../assets/pyodide/{tools.PYODIDE_DIR.rsplit("/", 1)[1]}/"' in zh
