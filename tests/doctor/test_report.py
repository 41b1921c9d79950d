"""The report's forms: the HTML file (self-contained, with its chart), Chinese, a file
written twice, and the text and JSON of the same run; the kinds' tips exist, and the tip
pages say the doctor finds them."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from generator.errors import Problem
from generator.records.schema import Tip
from tests.doctor.runs import SCRIPTS, planted, report_of

pytestmark = pytest.mark.xdist_group("doctor")  # the runs of test_detections, shared

PHASES = ("data", "forward", "backward", "optimizer", "other")


def test_html_report_is_one_file_with_a_chart() -> None:
    from generator.doctor.html import to_html
    from generator.records.ui import labels

    report = report_of("foreach_false.py", "--no-lint").report
    html = to_html(report, labels()["zh"], "zh")
    assert html.startswith("<!DOCTYPE html>") and '<html lang="zh">' in html
    assert "doctor 诊断报告" in html  # the page in Chinese (the findings in the run's language)
    assert "Optimizer updates one tensor at a time" in html
    assert f"foreach_false.py:{planted('foreach_false.py', 'optimizer_loop')}" in html
    assert "pytorch-tips show fused-optimizers" in html
    assert 'href="tips/' not in html  # no public address: no relative link to nowhere
    # the chart: a bar for each phase of each timed step that took any time
    bars = sum(1 for step in report["per_step"] for p in PHASES if step[p] > 0)
    assert html.count("<rect") == bars >= 3 * 3
    # self-contained: no script, no stylesheet or font from elsewhere
    assert not re.search(r"<script|<link|@import|src=\"http", html)


#: A half-width mark right after a Chinese character (the rule: full-width after Chinese).
HALF_WIDTH_AFTER_CHINESE = re.compile(r"[\u4e00-\u9fff][,.:;!?()\[\]]")

TOTAL_KEPT = """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.randn(512, 8), torch.randn(512, 1)), batch_size=8)
model = nn.Linear(8, 1)
optimizer = torch.optim.Adam(model.parameters())
total = 0
for x, y in loader:
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=False)
    total += loss  # the lint's PTT025: the graph's nodes, not tensors, so not measured
"""


def test_the_chinese_reports_read_as_chinese(tmp_path: Path) -> None:
    """--lang zh, as text and as HTML (from -o's extension): measured and static findings,
    every label in Chinese with full-width punctuation after Chinese, and no 倍."""
    from tests.doctor.runs import FAST, in_process

    (tmp_path / "train.py").write_text(TOTAL_KEPT, encoding="utf-8")
    text = in_process(*FAST, "--lang", "zh", "train.py", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    run = in_process(*FAST, "--quiet", "--lang", "zh", "-o", "r.html", "train.py", cwd=tmp_path)
    assert run.returncode == 0 and run.stdout == "" and run.stderr == "", run.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<title>doctor 诊断报告：train.py</title>" in html
    shown = re.sub(r"<[^>]+>", " ", html.split("<body>", 1)[1])
    assert "梯度被填零而不是释放" in text.stdout and "梯度被填零而不是释放" in shown
    assert "PTT025 【警告】" in text.stdout and "PTT025 【警告】" in shown  # static
    for output in (text.stdout, text.stderr, shown):
        assert not HALF_WIDTH_AFTER_CHINESE.findall(output), output
        assert "倍" not in output
    for line in text.stdout.splitlines() + text.stderr.splitlines():  # all in Chinese
        assert re.search(r"[\u4e00-\u9fff]", line) or not re.search(r"[a-z]{4,} [a-z]{4,}", line)


def test_a_report_file_is_replaced_whole(tmp_path: Path) -> None:
    """Twice in a row: the second report replaces the first, through a temporary file that
    does not stay; a report that cannot be written leaves nothing behind."""
    from generator.doctor.cli import _write
    from generator.errors import UserError

    out = tmp_path / "report.json"
    _write('{"run": 1}\n', out)
    _write('{"run": 2}\n', out)
    assert json.loads(out.read_text(encoding="utf-8")) == {"run": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
    blocked = tmp_path / "a-file"  # a file where a folder should be: even root cannot write
    blocked.write_text("", encoding="utf-8")
    with pytest.raises(UserError, match="cannot write the report"):
        _write("{}", blocked / "report.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "report.json"]


def test_text_and_json_of_one_report_agree() -> None:
    from generator.doctor.report import to_text
    from generator.records.ui import labels

    report = report_of("zero_grad_fill.py").report
    contract = {"script", "device", "steps", "step_time_s", "breakdown", "peak_memory_bytes"}
    assert contract <= set(report)
    assert set(report["breakdown"]) >= set(PHASES)
    keys = {"tip", "severity", "title", "evidence", "share", "path", "line", "static"}
    assert report["findings"] and all(keys <= set(f) for f in report["findings"])
    from generator.doctor.static import lint_script

    # The lint reports PTT032 there; the report leaves it out, as the measured zero_grad
    # finding at the same line and tip says it with evidence.
    line = planted("zero_grad_fill.py", "zero_grad_fill")
    alone = lint_script(SCRIPTS / "zero_grad_fill.py", "en")
    assert [(f.rule, f.line) for f in alone if f.tip == "zero-grad-set-to-none"] == [
        ("PTT032", line)
    ]
    static = [f for f in report["findings"] if f["static"]]
    assert all(f["rule"] != "PTT032" for f in static)
    text = to_text(report, labels()["en"])
    for f in report["findings"]:
        assert f["evidence"] in text
    assert json.loads(json.dumps(report)) == report


MISSING = "no-such-tip"


def _with_a_missing_tip(loaded: Mapping[Path, Any], whole_corpus: bool) -> list[Problem]:
    """The doctor's cross-check, with the sync finding naming a tip that does not exist."""
    from generator.doctor import kinds
    from generator.doctor.tips import finding_tip_problems

    original = kinds.KINDS["sync"]
    kinds.KINDS["sync"] = original._replace(tip=MISSING)
    try:
        return finding_tip_problems(loaded, whole_corpus)
    finally:
        kinds.KINDS["sync"] = original


@pytest.fixture(scope="module")
def validated() -> tuple[list[Tip], list[Problem]]:
    """The whole corpus validated once: with the doctor's cross-check as it is, and again
    with one finding naming a missing tip."""
    from generator.doctor.tips import finding_tip_problems
    from generator.records.load import validate

    return validate(cross_checks=[finding_tip_problems, _with_a_missing_tip])


def test_every_kind_names_a_tip_and_validate_fails_on_a_missing_one(
    validated: tuple[list[Tip], list[Problem]],
) -> None:
    from generator.doctor import kinds

    tips, problems = validated
    assert {k.tip for k in kinds.KINDS.values()} <= {t.id for t in tips}
    # The kinds as they are give no problem; the missing tip one, at its line of kinds.py.
    source = Path(kinds.__file__).read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(source, 1) if text.strip().startswith('"sync": Kind('))
    assert [str(p) for p in problems] == [
        f"generator/doctor/kinds.py:{line}: sync: names no tip: {MISSING!r}"
    ]


def test_each_tip_a_finding_names_says_the_doctor_detects_it(
    validated: tuple[list[Tip], list[Problem]],
) -> None:
    """On every such tip's page, in English and in Chinese: the line, linked to the doctor's
    page, with the title of each finding that names the tip; on no other tip's page."""
    from generator.doctor.kinds import kinds_by_tip
    from generator.records.ui import labels
    from generator.site.pages import tip_page

    tips, _ = validated
    by_id = {t.id: t for t in tips}
    named = kinds_by_tip()
    for lang in ("en", "zh"):
        L = labels()[lang]
        for tip, kinds in named.items():
            page = tip_page(by_id[tip], lang, tips, bench_results={})
            assert f"[{L['tip_doctor']}](../doctor.md)" in page, (tip, lang)
            for kind in kinds:
                assert f"[{L['doctor_kind_' + kind]}](../doctor.md#report)" in page, (tip, kind)
            # The attributes on a line of their own: the paragraph's, not its last link's.
            assert "(../doctor.md#report)\n{ .tip-verified title=" in page, (tip, lang)
    assert labels()["zh"]["tip_doctor"] == "doctor 能测出这个问题"
    other = tip_page(by_id["seed-everything"], "en", tips, bench_results={})
    assert "seed-everything" not in named and "The doctor detects" not in other


def test_the_mfu_peaks_are_the_composed_scripts() -> None:
    """The doctor's peak FLOP/s (generator.compose.peaks) and those of a composed train.py
    are one table: the same answer for each GPU name, None for the others."""
    import ast

    from generator.compose.peaks import GPU_PEAK_TFLOPS, PRECISIONS, peak_tflops
    from generator.compose.script import ComposeOptions, compose, read_tips_by_feature

    source = compose(ComposeOptions(), read_tips_by_feature())
    tree = ast.parse(source)
    wanted = [
        node
        for node in tree.body
        if (isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "GPU_PEAK_TFLOPS")
        or (isinstance(node, ast.FunctionDef) and node.name == "peak_tflops")
    ]
    namespace: dict = {"re": re}
    exec(compile(ast.Module(wanted, []), "train.py", "exec"), namespace)
    names = ["NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H200 NVL", "NVIDIA B200"]
    names += ["NVIDIA A100-SXM4-80GB", "NVIDIA L4", "NVIDIA GeForce RTX 4090", "Tesla T4", "CPU"]
    assert len(namespace["GPU_PEAK_TFLOPS"]) == len(GPU_PEAK_TFLOPS)
    for name in names:
        for precision in PRECISIONS:
            assert namespace["peak_tflops"](name, precision) == peak_tflops(name, precision)
    assert peak_tflops("NVIDIA H100 80GB HBM3", "bf16") == 989.4
    assert peak_tflops("Tesla T4", "fp32") is None
