"""The composer page and the lint playground in Chromium: the page's output is the command's,
byte for byte (compose, over every flag alone, every pair and random sets) and finding for
finding (lint, on every rule's INVALID examples); nothing leaves the site; the runtime loads
after first paint and only on these pages; nothing overflows a 390 px screen.

Each tool page is loaded once per language (390 px wide, every request recorded and any
off-site request refused) and shared by the tests; the runtime itself is tested without a
browser in tests/site/test_tools_runtime.py. Needs Debian's Chromium, like test_site.py.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from generator.compose.options import ComposeError
from generator.compose.script import compose, parse_flags, read_tips_by_feature
from generator.site.tools import Control, controls
from tests.site.browser import HOST, require_chromium

require_chromium()

from playwright.sync_api import Browser, Page  # noqa: E402

#: One worker runs every test here (pytest -n auto --dist loadgroup), so each tool page loads
#: once per language, not once per worker.
pytestmark = pytest.mark.xdist_group("tool-pages")

PAGES = {"compose": "composer/", "lint": "lint/playground/"}
#: The composer is opened as a link a user follows: GPT with FSDP, which is not the script the
#: page comes with, so Download and Copy must wait for the runtime (the stale-download bug).
OPENED_WITH = {"compose": "?model=gpt&fsdp", "lint": ""}
#: The composer's buttons, the script shown and the one Download hands out.
READY_JS = """async () => ({
    ...(BUTTONS_JS)(),
    text: document.querySelector('#compose-output').textContent,
    downloaded: await (await fetch(document.querySelector('#compose-download').href)).text(),
    launch_blocks: [...document.querySelectorAll('#compose-launch-blocks code')]
        .map(e => e.textContent),
})"""
#: What the composer's buttons say, read as soon as the page's scripts have run.
BUTTONS_JS = """() => {
    const download = document.querySelector('#compose-download');
    return {
        state: document.querySelector('#compose-output').dataset.state,
        shown: document.querySelector('#compose-output').dataset.flags,
        download: download.textContent,
        download_disabled: download.getAttribute('aria-disabled'),
        download_href: download.getAttribute('href'),
        copy_disabled: document.querySelector('#compose-copy').disabled,
        command_stale: document.querySelector('#compose-command').classList.contains('is-stale'),
        launch: !document.querySelector('#compose-launch').hidden,
    };
}"""
OUTPUT = {"compose": "#compose-output", "lint": "#lint-output"}
#: How long a cold runtime may take to answer (a 2-core CI machine running other tests).
READY_MS = 120_000


@dataclass
class ToolPage:
    page: Page
    requests: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    timing: dict[str, float] = field(default_factory=dict)
    early: dict = field(default_factory=dict)  # the composer's buttons before Python loaded
    ready: dict = field(default_factory=dict)  # and once it answered, with the script


@pytest.fixture(scope="module")
def tool_page(browser: Browser, base_url: str) -> Iterator[Callable[[str, str], ToolPage]]:
    """``tool_page(tool, lang)``: the tool's page, loaded once at 390 x 844 with its runtime
    ready; every request it made is recorded, and one for another host is refused."""
    loaded: dict[tuple[str, str], ToolPage] = {}
    contexts = []

    def load(tool: str, lang: str) -> ToolPage:
        if (tool, lang) in loaded:
            return loaded[(tool, lang)]
        context = browser.new_context(viewport={"width": 390, "height": 844})
        contexts.append(context)
        tp = ToolPage(context.new_page())

        def route(r) -> None:
            url = r.request.url
            tp.requests.append(url)
            if url.startswith(("data:", "blob:")) or urlsplit(url).hostname == HOST:
                r.continue_()
            else:
                tp.refused.append(url)
                r.abort()

        context.route("**/*", route)
        tp.page.on("request", lambda request: tp.requests.append(request.url))
        tp.page.on("requestfinished", lambda request: _record_start(tp, request))
        prefix = "zh/" if lang == "zh" else ""
        tp.page.goto(
            f"{base_url}/{prefix}{PAGES[tool]}{OPENED_WITH[tool]}", wait_until="domcontentloaded"
        )
        if tool == "compose":  # module scripts have run; the runtime starts after the load
            tp.early = tp.page.evaluate(BUTTONS_JS)
        tp.page.wait_for_function(
            f"['done', 'error', 'failed'].includes(document.querySelector('{OUTPUT[tool]}')"
            ".dataset.state)",
            timeout=READY_MS,
        )
        assert tp.page.eval_on_selector(OUTPUT[tool], "e => e.dataset.state") != "failed", (
            tp.page.inner_text(".tool-status")
        )
        if tool == "compose":
            tp.ready = tp.page.evaluate(READY_JS.replace("BUTTONS_JS", BUTTONS_JS))
        loaded[(tool, lang)] = tp
        return tp

    yield load
    for context in contexts:
        context.close()


def _record_start(tp: ToolPage, request) -> None:
    name = request.url.rsplit("/", 1)[-1]
    if name.endswith((".wasm", ".zip")):
        tp.timing[name] = request.timing["startTime"]


# --- compose: the page writes what the command writes ------------------------------------------


def _values(control: Control) -> list[str]:
    """Values to try for a control: "" for a switch (given, no value)."""
    if control.kind == "switch":
        return [""]
    if control.kind == "choice":
        return [c for c in control.choices if c != control.default]
    if control.kind == "number":
        return ["2", "1.5", "0"] if control.step == "any" else ["4", "1", "0"]
    return ["x"]


def flag_sets(form: list[Control], n_random: int = 40, seed: int = 17) -> list[list[tuple]]:
    """Every control alone (each of its values), every pair, and random sets: each a list of
    (control, value) in the form's order."""
    order = {c.name: i for i, c in enumerate(form)}

    def ordered(pairs: list[tuple]) -> list[tuple]:
        return sorted(pairs, key=lambda p: order[p[0].name])

    sets: list[list[tuple]] = [[(c, v)] for c in form for v in _values(c)]
    sets += [
        ordered([(a, _values(a)[0]), (b, _values(b)[0])])
        for a, b in itertools.combinations(form, 2)
    ]
    rng = random.Random(seed)
    for _ in range(n_random):
        chosen = rng.sample(form, rng.randint(3, min(8, len(form))))
        sets.append(ordered([(c, rng.choice(_values(c))) for c in chosen]))
    return sets


def _argv(pairs: list[tuple]) -> list[str]:
    return [x for c, v in pairs for x in ([f"--{c.name}", v] if v else [f"--{c.name}"])]


def _query(pairs: list[tuple]) -> str:
    return "?" + "&".join(c.name if not v else f"{c.name}={quote(v)}" for c, v in pairs)


def _command_flags() -> set[str]:
    """The long flags of ``python -m generator compose``, from the CLI's own parser."""
    import argparse

    from generator import cli

    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser = sub.choices["compose"]
    return {s[2:] for a in parser._actions for s in a.option_strings if s.startswith("--")} - {
        "help"
    }


#: Push a query string as a link or the back button would, and wait for the script it gives.
COMPOSE_JS = """async (query) => {
    const output = document.querySelector('#compose-output');
    history.pushState(null, '', location.pathname + query);
    window.dispatchEvent(new PopStateEvent('popstate'));
    await new Promise((resolve) => {
        const settled = () => output.dataset.state !== 'busy';
        if (settled()) return resolve();
        new MutationObserver((_, obs) => { if (settled()) { obs.disconnect(); resolve(); } })
            .observe(output, {attributes: true});
    });
    return {
        state: output.dataset.state,
        flags: JSON.parse(output.dataset.flags),
        text: output.textContent,
        error: document.querySelector('#compose-error').hidden
            ? null : document.querySelector('#compose-error-text').textContent,
        command: document.querySelector('#compose-command').textContent,
    };
}"""


def test_the_composer_page_writes_what_the_command_writes(
    tool_page: Callable[[str, str], ToolPage],
) -> None:
    cites = read_tips_by_feature()  # what `python -m generator compose` reads
    form = controls(cites, {})
    sets = flag_sets(form)
    assert len(sets) >= 200, len(sets)
    models = next((c for c in form if c.name == "model"), None)
    if models is not None:  # every model is composed, alone and with every other flag
        assert {v for s in sets for c, v in s if c is models} >= set(models.choices) - {
            models.default
        }
    page = tool_page("compose", "en").page
    # The form has one control per flag of the command, in its order, less the output file.
    on_page = page.eval_on_selector_all(
        "#compose-form [data-flag]", "els => els.map(e => e.dataset.flag)"
    )
    assert on_page == [c.name for c in form]
    assert set(on_page) | {"output", "force"} == _command_flags()
    mismatches, scripts, errors = [], 0, 0
    for pairs in sets:
        argv = _argv(pairs)
        got = page.evaluate(COMPOSE_JS, _query(pairs))
        assert got["flags"] == argv, (got["flags"], argv)
        try:
            options = parse_flags(argv)
            expected = compose(options, cites)
        except ComposeError as err:
            errors += 1
            if (got["state"], got["error"]) != ("error", str(err)):
                mismatches.append(f"{argv}: {got['error']!r} != {str(err)!r}")
            continue
        scripts += 1
        if got["state"] != "done" or got["text"] != expected or got["command"] != options.command():
            mismatches.append(f"{argv}: the page's script differs from the command's")
    print(f"\ncompose: {len(sets)} flag sets, {scripts} scripts, {errors} contradictions")
    assert not mismatches, "\n".join(mismatches[:10])
    assert scripts >= 150 and errors >= 5  # both paths were exercised


def test_a_contradiction_is_shown_beside_each_flag_it_names(
    tool_page: Callable[[str, str], ToolPage],
) -> None:
    page = tool_page("compose", "zh").page
    got = page.evaluate(COMPOSE_JS, "?amp&deterministic&cudnn-benchmark")
    with pytest.raises(ComposeError) as err:
        parse_flags(["--amp", "--deterministic", "--cudnn-benchmark"])
    assert got["state"] == "error" and got["error"] == err.value.in_lang("zh")  # in Chinese
    assert got["error"] != str(err.value) and got["error"].startswith("--deterministic 和")
    flagged = page.eval_on_selector_all(
        ".compose-flag.is-conflict", "els => els.map(e => e.dataset.flag)"
    )
    assert flagged == ["cudnn-benchmark", "deterministic"]
    notes = page.locator(".compose-flag.is-conflict .compose-flag__conflict").all_inner_texts()
    assert notes == [got["error"]] * 2
    assert page.get_attribute("#compose-download", "aria-disabled") == "true"
    # Fixed: the notes go, and the download holds the new script.
    got = page.evaluate(COMPOSE_JS, "?amp&deterministic")
    assert got["state"] == "done" and page.locator(".compose-flag.is-conflict").count() == 0
    assert page.evaluate("location.search") == "?amp&deterministic"
    downloaded = page.evaluate(
        "async () => (await fetch(document.querySelector('#compose-download').href)).text()"
    )
    assert downloaded == got["text"]
    assert page.get_attribute("#compose-download", "download") == "train.py"


def test_a_changed_control_updates_the_query_and_the_script(
    tool_page: Callable[[str, str], ToolPage],
) -> None:
    page = tool_page("compose", "en").page
    page.evaluate(COMPOSE_JS, "?amp")
    page.fill("#flag-accum", "8")
    page.wait_for_function(
        "JSON.parse(document.querySelector('#compose-output').dataset.flags).includes('8')"
        " && document.querySelector('#compose-output').dataset.state === 'done'"
    )
    assert page.evaluate("location.search") == "?amp&accum=8"
    assert page.inner_text("#compose-command") == "python -m generator compose --amp --accum 8"


def test_download_and_copy_wait_until_the_script_answers_the_form(
    tool_page: Callable[[str, str], ToolPage],
) -> None:
    """Opened as ``?model=gpt&fsdp``, the page shows the pre-rendered conv-net script while
    Python loads: Download, Copy and the command line wait ("Preparing…"); once the runtime
    answers, they hand out the command's script, and the commands for several machines (read
    from its docstring) sit next to Download. The same holds for every later change."""
    from generator.compose.browser import launch_commands
    from generator.records.ui import labels

    L = labels()["en"]
    tp = tool_page("compose", "en")
    page, early = tp.page, tp.early
    assert early["state"] == "busy" and early["shown"] == "[]", early  # Python still loading
    assert early["download"] == L["compose_ui_preparing"]
    assert early["download_disabled"] == "true" and early["download_href"] is None
    assert early["copy_disabled"] and early["command_stale"] and not early["launch"]
    ready = tp.ready  # once the runtime answered
    expected = compose(parse_flags(["--model", "gpt", "--fsdp"]), read_tips_by_feature())
    assert ready["download_disabled"] is None and ready["download"] == L["compose_ui_download"]
    assert not ready["copy_disabled"] and not ready["command_stale"] and ready["launch"]
    assert ready["text"] == ready["downloaded"] == expected
    shown = ready["launch_blocks"]
    assert shown == [c["text"] for c in launch_commands(expected)] and len(shown) == 2
    assert shown[0].startswith("torchrun --nnodes") and shown[1].startswith("#!/bin/bash")
    page.evaluate(COMPOSE_JS, "?model=gpt&fsdp")
    # A change: busy at once (read in the same task as the change), ready with the new script.
    during = page.evaluate(
        "() => { const box = document.querySelector('#flag-compile'); box.checked = true;"
        " box.dispatchEvent(new Event('input', {bubbles: true}));"
        f" return ({BUTTONS_JS})(); }}"
    )
    assert during["state"] == "busy" and during["download_disabled"] == "true", during
    assert during["copy_disabled"] and during["download"] == L["compose_ui_preparing"]
    page.wait_for_function(
        "document.querySelector('#compose-output').dataset.state === 'done'"
        " && document.querySelector('#compose-output').dataset.flags.includes('--compile')"
    )
    expected = compose(
        parse_flags(["--model", "gpt", "--compile", "--fsdp"]), read_tips_by_feature()
    )
    _assert_ready(page, expected, L)
    # Not distributed: no launch commands.
    page.evaluate(COMPOSE_JS, "?model=gpt")
    assert page.is_hidden("#compose-launch")


def _assert_ready(page: Page, expected: str, L: dict) -> None:
    now = page.evaluate(BUTTONS_JS)
    assert now["download_disabled"] is None and now["download"] == L["compose_ui_download"], now
    assert not now["copy_disabled"] and not now["command_stale"]
    assert page.inner_text("#compose-output") == expected
    downloaded = page.evaluate(
        "async () => (await fetch(document.querySelector('#compose-download').href)).text()"
    )
    assert downloaded == expected


def test_a_flag_given_bare_in_a_link_reads_as_on_the_command_line(
    tool_page: Callable[[str, str], ToolPage],
) -> None:
    """``?activation-checkpointing`` is ``--activation-checkpointing`` (``full``), for every
    flag whose value may be left out; a bare flag that needs a value gives the command's error
    (in Chinese on the Chinese page)."""
    cites = read_tips_by_feature()
    optional = [c for c in controls(cites, {}) if c.const is not None]
    assert optional, "no flag with an optional value"
    page = tool_page("compose", "zh").page
    for control in optional:
        got = page.evaluate(COMPOSE_JS, f"?{control.name}")
        assert got["flags"] == [f"--{control.name}", control.const], got["flags"]
        assert page.eval_on_selector(f"#flag-{control.name}", "e => e.value") == control.const
        try:
            options = parse_flags([f"--{control.name}"])  # bare, as the command reads it
        except ComposeError as err:
            assert (got["state"], got["error"]) == ("error", err.in_lang("zh"))
            continue
        assert got["state"] == "done", got["error"]
        assert got["text"] == compose(options, cites) and got["command"] == options.command()
    got = page.evaluate(COMPOSE_JS, "?accum")
    with pytest.raises(ComposeError) as err:
        parse_flags(["--accum"])
    assert got["flags"] == ["--accum"] and (got["state"], got["error"]) == (
        "error",
        err.value.in_lang("zh"),
    )
    assert page.evaluate("location.search") == "?accum"


# --- lint: the page reports what the command reports -------------------------------------------

#: Give the playground a script and a file name as a paste would (with or without its unsafe
#: fixes), and wait for its report.
LINT_JS = """async ([name, source, unsafe]) => {
    const output = document.querySelector('#lint-output');
    document.querySelector('#lint-name').value = name;
    document.querySelector('#lint-unsafe').checked = !!unsafe;
    const input = document.querySelector('#lint-input');
    input.value = source;
    input.dispatchEvent(new Event('input', {bubbles: true}));
    await new Promise((resolve) => {
        const settled = () => output.dataset.state !== 'busy';
        if (settled()) return resolve();
        new MutationObserver((_, obs) => { if (settled()) { obs.disconnect(); resolve(); } })
            .observe(output, {attributes: true});
    });
    return {
        state: output.dataset.state,
        name: output.dataset.name,
        json: document.querySelector('#lint-json').textContent,
        diff: document.querySelector('#lint-diff').textContent,
        unsafe: output.dataset.unsafe,
        items: [...output.querySelectorAll('li')].map(li => [li.dataset.rule, +li.dataset.line,
            +li.dataset.column, li.querySelector('.lint-message').textContent,
            li.dataset.fix || null,
            [...li.querySelectorAll('a')].map(a => a.getAttribute('href'))]),
    };
}"""


def _split_diffs(text: str) -> dict[str, str]:
    parts = re.split(r"(?m)^(?=--- a/)", text)
    return {re.match(r"--- a/(\S+)", p).group(1): p for p in parts if p.startswith("--- a/")}


@pytest.mark.parametrize(("lang", "unsafe"), [("en", False), ("zh", True)])
def test_the_playground_reports_what_the_command_reports_on_every_invalid_example(
    tool_page: Callable[[str, str], ToolPage],
    lang: str,
    unsafe: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The English page against ``lint --format json`` and ``--diff``; the Chinese page, with
    its unsafe fixes asked for, against ``--lang zh`` and ``--diff --unsafe-fixes``."""
    from generator import cli
    from generator.lint.report import rule_path
    from generator.lint.rules import RULES

    examples = {
        f"{rule.code}_{i}.py": example.code
        for rule in RULES
        for i, example in enumerate(rule.invalid_examples())
    }
    for name, code in examples.items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    options = ["--lang", lang, *(["--unsafe-fixes"] if unsafe else [])]
    cli.main(["lint", ".", "--format", "json", *options])  # the command, once over every example
    by_file: dict[str, list] = {name: [] for name in examples}
    for finding in json.loads(capsys.readouterr().out):
        by_file[finding["path"]].append(finding)
    cli.main(["lint", ".", "--diff", *options])
    diffs = _split_diffs(capsys.readouterr().out)
    assert all(by_file.values()), [n for n, f in by_file.items() if not f]  # INVALID: findings
    assert any(f["fix"] == "unsafe" for found in by_file.values() for f in found)

    page = tool_page("lint", lang).page
    mismatches = []
    for name, code in examples.items():
        got = page.evaluate(LINT_JS, [name, code, unsafe])
        assert got["state"] == "done" and got["name"] == name, got
        assert got["unsafe"] == str(unsafe).lower(), got
        if json.loads(got["json"]) != by_file[name]:
            mismatches.append(f"{name}: {got['json']} != {by_file[name]}")
        if got["diff"] != diffs.get(name, ""):
            mismatches.append(f"{name}: the fix preview differs from --diff {options}")
        expected_items = [
            [f["rule"], f["line"], f["column"], f["message"].replace("`", ""), f["fix"]]
            for f in by_file[name]
        ]
        if [item[:5] for item in got["items"]] != expected_items:
            mismatches.append(f"{name}: the list shows {got['items']}")
        tips = {f["rule"]: f"../../tips/{f['tip']}/" for f in by_file[name]}
        for rule, *_, links in got["items"]:
            if links != [tips[rule], f"../../{rule_path(rule)}"]:
                mismatches.append(f"{name}: {rule} does not link its tip and rule page: {links}")
    page.evaluate("document.querySelector('#lint-unsafe').checked = false")
    print(f"\nlint ({lang}): {len(examples)} INVALID examples of {len(RULES)} rules")
    assert not mismatches, "\n".join(mismatches[:10])


def test_the_playground_takes_a_dropped_file_and_applies_the_fixes(
    tool_page: Callable[[str, str], ToolPage], built_site: Path
) -> None:
    """PTT011's fix (weights_only=True) is unsafe: it is offered, and applied, only once the
    reader asks for unsafe fixes, as ``lint --fix --unsafe-fixes`` applies it."""
    from generator.lint.rules import RULES
    from generator.records.ui import labels

    L = labels()["zh"]
    page = tool_page("lint", "zh").page
    page.evaluate(
        """() => {
        const data = new DataTransfer();
        data.items.add(new File(["import torch\\nm = torch.load('m.pt')\\n"], "mine.py"));
        document.querySelector('.lint-editor').dispatchEvent(
            new DragEvent('drop', {dataTransfer: data, bubbles: true, cancelable: true}));
    }"""
    )
    page.wait_for_function(
        "document.querySelector('#lint-output').dataset.name === 'mine.py'"
        " && document.querySelector('#lint-output').dataset.state === 'done'"
    )
    item = page.locator("#lint-output li")
    assert item.count() == 1 and item.get_attribute("data-rule") == "PTT011"
    assert item.get_attribute("data-line") == "2"
    rule = next(r for r in RULES if r.code == "PTT011")
    assert item.locator(".lint-message").inner_text() == rule.message_in("zh").replace("`", "")
    tip_href, rule_href = (a.get_attribute("href") for a in item.locator("a").all())
    for href in (tip_href, rule_href):  # the Chinese tip page and the Chinese rule page
        target = (built_site / "zh/lint/playground" / href / "index.html").resolve()
        assert target.is_file() and target.is_relative_to(built_site / "zh"), href
    assert rule_href.endswith("/lint/rules/PTT011/")
    assert page.input_value("#lint-input").startswith("import torch")
    # Safe fixes only, as --fix: none here, so nothing to apply, and the status says why.
    assert item.get_attribute("data-fix") == "unsafe"
    assert item.locator(".lint-badge--unsafe").inner_text() == L["lint_fix_unsafe"]
    assert page.is_hidden("#lint-fix")
    assert page.inner_text("#lint-status") == L["playground_found"].format(n=1, safe=0, unsafe=1)
    page.check("#lint-unsafe")
    page.wait_for_function(
        "document.querySelector('#lint-output').dataset.unsafe === 'true'"
        " && document.querySelector('#lint-output').dataset.state === 'done'"
    )
    assert page.inner_text("#lint-fix-count") == L["playground_fixes"].format(
        fix="--fix --unsafe-fixes", n=1, diff="--diff --unsafe-fixes"
    )
    assert "+m = torch.load('m.pt', weights_only=True)" in page.inner_text("#lint-diff")
    page.click("#lint-apply")
    page.wait_for_function(
        "document.querySelector('#lint-output').dataset.state === 'done'"
        " && !document.querySelector('#lint-output li')"
    )
    assert "weights_only=True" in page.input_value("#lint-input")
    assert page.inner_text("#lint-status") == "没有发现问题。"
    page.uncheck("#lint-unsafe")


def test_apply_the_fixes_waits_until_the_fixes_answer_the_script(
    tool_page: Callable[[str, str], ToolPage],
) -> None:
    """A click on "Apply the fixes" while the new text is being checked would put back the
    old text, fixed: the button waits ("Preparing…") for the answer to the text shown."""
    from generator.records.ui import labels

    L = labels()["en"]
    page = tool_page("lint", "en").page
    page.evaluate(LINT_JS, ["mine.py", "import torch\nm = torch.load('m.pt')\n", True])
    assert (
        page.is_enabled("#lint-apply") and page.inner_text("#lint-apply") == L["playground_apply"]
    )
    during = page.evaluate(
        """() => { const input = document.querySelector('#lint-input');
        input.value += 'x = 1\\n'; input.dispatchEvent(new Event('input', {bubbles: true}));
        const apply = document.querySelector('#lint-apply');
        return [apply.disabled, apply.textContent]; }"""
    )
    assert during == [True, L["compose_ui_preparing"]]
    page.wait_for_function("document.querySelector('#lint-output').dataset.state === 'done'")
    assert page.is_enabled("#lint-apply")
    page.click("#lint-apply")
    page.wait_for_function("document.querySelector('#lint-input').value.includes('weights_only')")
    assert page.input_value("#lint-input").endswith("weights_only=True)\nx = 1\n")
    page.evaluate("document.querySelector('#lint-unsafe').checked = false")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_tool_pages_have_no_serious_accessibility_fault(
    tool_page: Callable[[str, str], ToolPage], lang: str
) -> None:
    """axe-core: no serious or critical violation on the composer (the commands for several
    machines open, then a contradiction) and the playground (its sample's findings), on a
    phone and on a desktop screen. The pages of test_site_a11y.py are checked there."""
    from tests.site.axe import violations

    found = {}
    compose_page = tool_page("compose", lang).page
    compose_page.evaluate(COMPOSE_JS, "?model=gpt&fsdp&amp")
    compose_page.evaluate("document.querySelector('#compose-launch').open = true")
    lint_page = tool_page("lint", lang).page
    lint_page.click("#lint-sample")
    lint_page.wait_for_function("document.querySelector('#lint-output li')")
    for screen, (width, height) in (("phone", (390, 844)), ("desktop", (1280, 900))):
        for tool, page in (("compose", compose_page), ("lint", lint_page)):
            page.set_viewport_size({"width": width, "height": height})
            found[f"{tool} {screen}"] = violations(page)
    compose_page.evaluate(COMPOSE_JS, "?model=gpt&ddp&fsdp")
    found["compose desktop, contradiction"] = violations(compose_page)
    for page in (compose_page, lint_page):
        page.set_viewport_size({"width": 390, "height": 844})
    assert not any(found.values()), "\n".join(f"{k}: {v}" for k, v in found.items() if v)


def test_a_link_carries_the_script_in_its_fragment(
    tool_page: Callable[[str, str], ToolPage],
) -> None:
    page = tool_page("lint", "en").page
    code = "import torch\nw = torch.load('w.pt')  # 显存\n"
    page.evaluate(LINT_JS, ["shared.py", code])
    page.click("#lint-share")
    page.wait_for_function("location.hash.startsWith('#code=')")
    link = page.evaluate("location.hash")
    assert "torch" not in link and "name=shared.py" in link  # compressed: never sent anyway
    page.evaluate(LINT_JS, ["other.py", "x = 1\n"])
    page.evaluate("() => { location.hash = ''; }")
    page.evaluate("h => { location.hash = h; }", link)  # as opening the link does
    page.wait_for_function(
        "document.querySelector('#lint-output').dataset.name === 'shared.py'"
        " && document.querySelector('#lint-output').dataset.state === 'done'"
    )
    assert page.input_value("#lint-input") == code
    assert page.get_attribute("#lint-output li", "data-rule") == "PTT011"


# --- offline and light -------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("tool", ["compose", "lint"])
def test_no_request_leaves_the_site_and_the_runtime_waits_for_first_paint(
    tool_page: Callable[[str, str], ToolPage], tool: str, lang: str
) -> None:
    tp = tool_page(tool, lang)
    tp.page.wait_for_load_state("networkidle")
    assert tp.refused == [], tp.refused
    hosts = {urlsplit(u).hostname for u in tp.requests if not u.startswith(("data:", "blob:"))}
    assert hosts == {HOST}, hosts
    # The runtime's requests (from the worker) were seen, so the check covers them.
    names = {u.rsplit("/", 1)[-1] for u in tp.requests}
    assert {"pyodide.asm.wasm", "python_stdlib.zip"} <= names
    assert any(re.fullmatch(r"tools-[0-9a-f]{12}\.zip", n) for n in names), names
    painted = tp.page.evaluate(
        "performance.timeOrigin + performance.getEntriesByName('first-contentful-paint')[0].startTime"
    )
    assert tp.timing and min(tp.timing.values()) >= painted, (tp.timing, painted)


def test_other_pages_load_no_runtime(browser: Browser, base_url: str) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        for path in ("", "lint/", "tips/gradient-accumulation/", "zh/"):
            page.goto(f"{base_url}/{path}")
            page.wait_for_load_state("networkidle")
        assert requested and not [u for u in requested if "/assets/pyodide/" in u or "/tools/" in u]
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("tool", ["compose", "lint"])
def test_no_horizontal_overflow_at_390_px_with_results_shown(
    tool_page: Callable[[str, str], ToolPage], tool: str, lang: str
) -> None:
    page = tool_page(tool, lang).page
    if tool == "compose":  # the longest command line, a conflict message
        page.evaluate(
            COMPOSE_JS, "?amp&amp-dtype=bf16&accum=4&ddp&compile&deterministic&cudnn-benchmark"
        )
    else:
        page.click("#lint-sample")
        page.wait_for_function("document.querySelector('#lint-output li')")
    width, client = page.evaluate(
        "[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]"
    )
    assert width <= client, f"{tool} ({lang}) is {width}px wide in a {client}px viewport"
