"""The bench machinery: statistics on synthetic timings, verdicts, the results file, the bench
section of the schema, and how results are rendered (tip pages, summary page, chart).

Nothing here measures for real: the full measurement is `python -m generator bench`.
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from generator import paths
from generator.bench import summary
from generator.bench import view as benchview
from generator.bench.chart import Bar, bar_chart
from generator.bench.results import (
    Environment,
    FormTime,
    MemoryResult,
    ResultsFile,
    Settings,
    TimeResult,
    TipResult,
    code_hash,
    dumps,
    load_all,
    merge,
    read_results,
)
from generator.bench.stats import (
    Ratio,
    coverage,
    median,
    memory_ratio,
    memory_verdict,
    quantile,
    replicate_ratios,
    speedup,
    summarize,
    time_verdict,
)
from generator.bench.texts import fmt_seconds
from generator.errors import UserError
from generator.records.load import validate
from generator.records.render import plain_text
from generator.records.schema import Tip
from generator.records.taxonomy import SEEDS
from generator.site.pages import LABELS
from tests.helpers import example_record, run_cli, write_record


@pytest.fixture(scope="module")
def bench_tips(tips: list[Tip]) -> list[Tip]:
    """The tips with a ``bench`` section."""
    return [t for t in tips if t.bench is not None]


# --- statistics ----------------------------------------------------------------------------


def test_quantiles_match_linear_interpolation() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert median(values) == 3.0
    assert quantile(values, 0.25) == 2.0
    assert quantile(values, 0.0) == 1.0 and quantile(values, 1.0) == 5.0
    assert quantile([1.0, 2.0], 0.5) == 1.5
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.25) == pytest.approx(1.75)  # numpy's default
    with pytest.raises(ValueError):
        quantile([], 0.5)
    with pytest.raises(ValueError):
        quantile([1.0], 1.5)


def test_summary_of_synthetic_times() -> None:
    times = [1.0e-3, 1.1e-3, 0.9e-3, 1.2e-3, 5.0e-3]  # one outlier
    s = summarize(times)
    assert s.median == pytest.approx(1.1e-3)
    assert (s.min, s.max, s.n) == (0.9e-3, 5.0e-3, 5)
    assert s.iqr == pytest.approx(s.q3 - s.q1) and s.q1 <= s.median <= s.q3


def test_speedup_is_the_median_of_paired_ratios_with_their_range() -> None:
    before = [2.0, 2.2, 1.8, 2.0, 2.1]
    after = [1.0, 1.0, 1.0, 1.1, 1.0]
    ratios = replicate_ratios(before, after)
    r = speedup(before, after)
    assert r.value == pytest.approx(median(ratios)) == pytest.approx(2.0)
    assert (r.low, r.high) == (pytest.approx(1.8), pytest.approx(2.2))
    assert r.low <= r.value <= r.high


@pytest.mark.parametrize(
    ("before", "after"),
    [([1.0], [1.0, 2.0]), ([], []), ([1.0], [0.0])],
    ids=["unpaired", "empty", "zero-time"],
)
def test_replicate_ratios_reject_bad_input(before: list[float], after: list[float]) -> None:
    with pytest.raises(ValueError):
        replicate_ratios(before, after)


def test_min_max_interval_coverage() -> None:
    assert coverage(5) == pytest.approx(0.9375)
    assert coverage(7) == pytest.approx(1 - 1 / 64)
    assert coverage(1) == 0.0


@pytest.mark.parametrize(
    ("ratio", "verdict"),
    [
        (Ratio(1.9, 1.8, 2.0), "faster"),
        (Ratio(0.5, 0.45, 0.55), "slower"),
        (Ratio(1.2, 0.9, 2.0), "no-difference"),  # the median alone would say faster
        (Ratio(0.85, 0.6, 1.1), "no-difference"),  # the median alone would say slower
        (Ratio(1.02, 1.01, 1.025), "no-difference"),  # tight but within the tolerance
        (Ratio(1.1, 1.05, 1.2), "faster"),
        (Ratio(0.9, 0.85, 0.95), "slower"),
        # freeze-layers on the 2-core CPU: replicates 2.42, 2.33, 2.21, 2.05 and a disturbed
        # 0.73. Not shown to be faster, but no evidence of "no difference" either.
        (Ratio(2.21, 0.73, 2.42), "inconclusive"),
        (Ratio(0.6, 0.5, 1.2), "inconclusive"),
    ],
    ids=[
        "faster",
        "slower",
        "overlap-high",
        "overlap-low",
        "tiny",
        "small-faster",
        "small-slower",
        "disagreeing-high",
        "disagreeing-low",
    ],
)
def test_the_interval_decides_the_time_verdict(ratio: Ratio, verdict: str) -> None:
    assert time_verdict(ratio) == verdict


def _planted_disagreement(tmp_path: Path) -> ResultsFile:
    """The committed CPU results, with freeze-layers' time replaced by what an older file held:
    replicates that disagree (2.21x median, one replicate below 1x) under the verdict of the
    rule of the day, "no-difference"."""
    from generator.bench.results import results_path

    path = results_path("cpu")
    if not path.exists():
        pytest.skip("no CPU results committed")
    data = json.loads(path.read_text(encoding="utf-8"))
    result = data["results"]["freeze-layers"]["default"]
    assert result["kind"] == "time", result["kind"]
    result["time"].update(ratio=2.21, low=0.93, high=2.6, verdict="no-difference")
    planted = tmp_path / "cpu.json"
    planted.write_text(json.dumps(data), encoding="utf-8")
    return read_results(planted)


def test_a_results_file_follows_the_current_verdict_rule(tmp_path: Path) -> None:
    """A file measured before the rule changed reads with today's verdict (a function of the
    ratio and its interval), so 2.21x is never shown as "no significant difference"."""
    result = _planted_disagreement(tmp_path).results["freeze-layers"]["default"].time
    assert result is not None and result.ratio > 2 and result.low < 1
    assert result.verdict == "inconclusive"


def test_the_chart_draws_disagreeing_replicates_apart_and_leads_with_the_users_tips(
    tmp_path: Path, tips: list[Tip]
) -> None:
    from generator.records import ui

    cpu = _planted_disagreement(tmp_path)
    dev = summary.device_summary("cpu", tips, cpu, "en", ui.labels()["en"])
    assert dev.chart is not None
    rows = re.findall(
        r'<li class="bench-row bench-row--(\w+)[^"]*"[^>]*>.*?href="([^"]+)"', dev.chart
    )
    kinds = dict((href, kind) for kind, href in rows)
    assert kinds["../tips/freeze-layers/"] == "unsure"
    assert "bench-key--unsure" in dev.chart  # the legend names it
    assert kinds["../tips/channels-last/"] != "unsure"  # agreeing replicates are not
    # The first bars are the "Training is slow" tips, in that page's order; the micro-benchmark
    # with the largest ratio (gc.collect() made about a million times faster) is no bar at all.
    first = [href for _, href in rows[:5]]
    assert "../tips/gc-freeze-training-loop/" not in kinds
    order = summary.reading_order(tips, summary.TIME_PROBLEM)
    keys = [order(summary.Bar("x", 1.0, 1.0, 1.0, "faster", href)) for href in first]
    assert keys == sorted(keys) and keys[0][0] == min(k[0] for k in keys)


def test_micro_benchmarks_are_figures_of_their_own_not_bars_of_the_step_chart(
    tips: list[Tip],
) -> None:
    """A tip whose bench times one operation (`Bench.operation`: one GC pass, one attention
    call) is shown as "one GC pass: 242 ms → 110 ns" beside the chart, never as a bar of it,
    in both languages; the chart keeps every other time result."""
    from generator.records import ui

    cpu = read_results(paths.ROOT / "benchmarks" / "results" / "cpu.json")
    operations = {t.id for t in tips if t.bench is not None and t.bench.operation is not None}
    assert "gc-freeze-training-loop" in operations
    for lang in ("en", "zh"):
        dev = summary.device_summary("cpu", tips, cpu, lang, ui.labels()[lang])
        assert dev.chart is not None
        bars = set(re.findall(r'href="\.\./tips/([^/]+)/"', dev.chart))
        measured = {t.id for t in tips if t.bench is not None and t.bench.kind == "time"} & set(
            cpu.results
        )
        assert bars and not bars & operations and bars == measured - operations
        figures = {tip.id: figure for tip, figure in dev.operations}
        assert set(figures) == operations & set(cpu.results)
        gc = next(t for t in tips if t.id == "gc-freeze-training-loop")
        time = cpu.regimes(gc.id)[0][1].time
        assert time is not None and gc.bench is not None and gc.bench.operation is not None
        colon = "：" if lang == "zh" else ": "
        assert figures[gc.id] == (
            f"{gc.bench.operation.get(lang)}{colon}{fmt_seconds(time.before.median_s)} → "
            f"{fmt_seconds(time.after.median_s)}"
        )


def test_a_gpu_pill_without_a_gpu_measurement_says_it_is_reported(tips: list[Tip]) -> None:
    """A speed or memory tip's "Helps on: CUDA GPU" says "reported, not measured here" until
    a CUDA results file measures the tip; a tip of another impact only says where it helps."""
    from generator.site.pages import tip_page, unmeasured_helps

    tip = next(t for t in tips if t.id == "channels-last")
    assert "cuda" in tip.hardware.helps_on and "speed" in tip.impact
    cpu = read_results(paths.ROOT / "benchmarks" / "results" / "cpu.json")
    assert unmeasured_helps(tip, {"cpu": cpu}) == {"cuda"}
    measured_there = cpu.model_copy(update={"device": "cuda"})  # the same file, as CUDA's
    assert unmeasured_helps(tip, {"cpu": cpu, "cuda": measured_there}) == set()
    for lang in ("en", "zh"):
        page = tip_page(tip, lang, tips, {"cpu": cpu})
        pill = next(line for line in page.splitlines() if "tip-badge--helps-on" in line)
        assert LABELS[lang]["helps_on_unmeasured"] in pill, pill
    other = next(
        t for t in tips if "cuda" in t.hardware.helps_on and not {"speed", "memory"} & set(t.impact)
    )
    assert unmeasured_helps(other, {"cpu": cpu}) == set()


def test_memory_ratio_and_verdict() -> None:
    assert memory_ratio(200, 100) == 2.0
    assert memory_ratio(100, 0) == math.inf
    assert memory_ratio(0, 0) == 1.0
    assert memory_verdict(200, 100) == "less-memory"
    assert memory_verdict(100, 200) == "more-memory"
    assert memory_verdict(1000, 990) == "no-difference"
    assert memory_verdict(100, 0) == "less-memory"
    with pytest.raises(ValueError):
        memory_ratio(-1, 1)


# --- results file --------------------------------------------------------------------------


def _env(**changes: object) -> Environment:
    base = dict(
        cpu_model="Test CPU",
        cpu_arch="x86_64",
        cpu_cores=2,
        cpu_capability="AVX2",
        torch="2.13.0",
        python="3.11.7",
        platform="Linux",
        num_threads=2,
        date="2026-01-02T03:04:05+00:00",
    )
    return Environment(**(base | changes))  # type: ignore[arg-type]


def _form(median_s: float) -> FormTime:
    return FormTime(
        median_s=median_s,
        q1_s=median_s * 0.95,
        q3_s=median_s * 1.05,
        min_s=median_s * 0.9,
        max_s=median_s * 1.2,
        replicate_medians_s=[median_s] * 5,
        blocks=25,
        runs_per_block=[10] * 5,
    )


def _time(before: float, after: float, low: float, high: float) -> TimeResult:
    ratio = Ratio(before / after, low, high)
    return TimeResult(
        before=_form(before),
        after=_form(after),
        ratio=ratio.value,
        low=low,
        high=high,
        verdict=time_verdict(ratio),
    )


def _results(
    tips: dict[str, TipResult | dict[str, TipResult]], device: str = "cpu", **env: object
) -> ResultsFile:
    """A results file; a bare TipResult is the tip's ``default`` regime."""
    return ResultsFile(
        schema_version=2,
        device=device,  # type: ignore[arg-type]
        environment=_env(**env),
        settings=Settings(quick=True, replicates=5, min_run_time_s=0.05, tolerance=0.03),
        results={
            k: v if isinstance(v, dict) else {"default": v}  # type: ignore[misc]
            for k, v in tips.items()
        },
    )


def _tip_result(
    tip: Tip,
    time: TimeResult,
    memory: MemoryResult | None = None,
    device: str = "cpu",
    sizes: dict[str, int] | None = None,
) -> TipResult:
    assert tip.bench is not None
    return TipResult(
        kind=tip.bench.kind,
        code=code_hash(tip, device),
        measured_at="2026-01-02T03:04:05+00:00",
        sizes=sizes or {},
        time=time,
        memory=memory,
    )


def _bench_tip(**bench: object) -> Tip:
    data = example_record()
    data["bench"] = {
        "sizes": {"cpu": [{"values": {"n": 4}}], "cuda": [{"values": {"n": 4}}]},
        "setup": "x = torch.ones(n)",
        "before": "x + 1",
        "after": "x.add_(1)",
        "reported": [
            {
                "figure": {"en": "3x faster", "zh": "快 3 倍"},
                "hardware": "NVIDIA V100",
                "source": {"seed": "004"},
            }
        ],
    } | bench
    return Tip.model_validate(data | {"id": "synthetic-tip"})


def test_results_file_round_trip(tmp_path: Path) -> None:
    tip = _bench_tip()
    original = _results({"synthetic-tip": _tip_result(tip, _time(2e-3, 1e-3, 1.8, 2.1))})
    path = tmp_path / "cpu.json"
    path.write_text(dumps(original), encoding="utf-8")
    assert read_results(path) == original
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["environment"]["cpu_model"] == "Test CPU" and data["schema_version"] == 2
    data["results"]["synthetic-tip"]["default"]["speed"] = 3  # typed in by hand, a new key
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UserError, match="speed"):
        read_results(path)


def test_partial_runs_merge_only_on_the_same_machine() -> None:
    tip = _bench_tip()
    a = _results({"a": _tip_result(tip, _time(2e-3, 1e-3, 1.8, 2.1))})
    b = _results({"b": _tip_result(tip, _time(1e-3, 1e-3, 0.9, 1.1))})
    assert set(merge(a, b, replace=False).results) == {"a", "b"}
    assert set(merge(a, b, replace=True).results) == {"b"}
    other = _results({"b": b.results["b"]}, cpu_model="Another CPU")
    with pytest.raises(UserError, match="another machine"):
        merge(a, other, replace=False)
    assert merge(None, other, replace=False) == other


def test_committed_results_are_valid_and_fresh(tips: list[Tip]) -> None:
    from generator.bench.namespace import regime_of, size_entries

    by_id = {t.id: t for t in tips}
    for device, file in load_all().items():
        assert file.device == device
        for tip_id in file.results:
            tip = by_id.get(tip_id)
            assert tip is not None and tip.bench is not None, (
                f"{device}.json: {tip_id} has no bench"
            )
            regimes = file.regimes(tip_id)
            for regime, res in regimes:
                assert res.error is None, f"{device}.json: {tip_id} ({regime}) failed: {res.error}"
                assert res.code == code_hash(tip, device), (
                    f"{tip_id}: bench code or sizes changed since it was measured: "
                    f"run `python -m generator bench {tip_id} --device {device}`"
                )
            expected = [regime_of(size) for size in size_entries(tip, device)]
            assert [r for r, _ in regimes] == expected, f"{device}.json: {tip_id}"


def test_every_cpu_measurable_tip_has_a_cpu_result(bench_tips: list[Tip]) -> None:
    files = load_all()
    if "cpu" not in files:
        pytest.skip("benchmarks/results/cpu.json not written yet")
    missing = [
        t.id
        for t in bench_tips
        if "cpu" in t.bench.measured_devices()  # type: ignore[union-attr]
        and t.id not in files["cpu"].results
    ]
    assert missing == [], "run `python -m generator bench --quick`: " + ", ".join(missing)


# --- schema --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bench", "reason"),
    [
        ({"kind": "memory"}, "kind memory needs a `memory` section"),
        ({"after": None}, "give `before` and `after`"),
        ({"speedup": 3}, "unknown key"),
        (
            {"not_measurable": {"devices": ["cpu", "cpu"], "reason": {"en": "x", "zh": "没有"}}},
            "duplicate",
        ),
        ({"memory": {"what": {"en": "x", "zh": "字节"}, "before": "1 +", "after": "2"}}, "Python"),
    ],
    ids=["memory-without-bytes", "no-after", "unknown-key", "duplicate-device", "bad-expression"],
)
def test_bench_section_rules(tmp_path: Path, bench: dict, reason: str) -> None:
    data = example_record()
    data["bench"] = {
        "sizes": {"cpu": [{"values": {"n": 1}}], "cuda": [{"values": {"n": 1}}]},
        "setup": "x = n",
        "before": "x + 1",
        "after": "x + 2",
    } | bench
    data["bench"] = {k: v for k, v in data["bench"].items() if v is not None}
    path = write_record(tmp_path, "bench-rule.yaml", data)
    _, problems = validate([path])
    assert problems and all(p.field.startswith("bench") for p in problems), problems
    assert any(reason in p.reason for p in problems), problems


def test_a_cpu_measured_bench_needs_a_cpu_tip(tmp_path: Path) -> None:
    data = example_record()
    data["hardware"] = {
        "devices": ["cuda"],
        "helps_on": ["cuda"],
        "notes": {"en": "GPU only.", "zh": "仅 GPU。"},
    }
    data["bench"] = {
        "sizes": {"cpu": [{"values": {"n": 1}}], "cuda": [{"values": {"n": 1}}]},
        "setup": "x = n",
        "before": "x + 1",
        "after": "x + 2",
    }
    path = write_record(tmp_path, "gpu-tip.yaml", data)
    _, problems = validate([path])
    assert any("list cpu in bench.not_measurable" in p.reason for p in problems), problems
    data["bench"]["not_measurable"] = {
        "devices": ["cpu"],
        "reason": {"en": "GPU.", "zh": "仅 GPU。"},
    }
    path = write_record(tmp_path, "gpu-tip.yaml", data)
    assert validate([path])[1] == []


def test_a_speed_tip_without_bench_is_invalid(tmp_path: Path) -> None:
    data = example_record()
    del data["bench"]
    _, problems = validate([write_record(tmp_path, "no-bench.yaml", data)])
    assert [p.reason for p in problems] == [
        "a speed or memory tip needs a `bench` section (the workload `python -m generator "
        "bench` measures, or bench.not_measurable with the reason)"
    ]
    data["impact"] = ["correctness"]
    assert validate([write_record(tmp_path, "no-bench.yaml", data)])[1] == []


def test_every_speed_or_memory_tip_has_a_bench_section(tips: list[Tip]) -> None:
    missing = [t.id for t in tips if {"speed", "memory"} & set(t.impact) and t.bench is None]
    assert missing == [], "add a bench section (or not_measurable) to: " + ", ".join(missing)


# --- rendering -----------------------------------------------------------------------------


def test_tip_view_shows_figures_environment_and_reported() -> None:
    tip = _bench_tip()
    files = {"cpu": _results({"synthetic-tip": _tip_result(tip, _time(2e-3, 1e-3, 1.8, 2.1))})}
    view = benchview.tip_view(tip, files, "en", LABELS["en"], SEEDS)
    assert view is not None
    cpu, cuda = view.rows
    assert cpu.result == "**2.00× faster** (1.80–2.10)"
    assert cpu.before.startswith("2 ms") and cpu.after.startswith("1 ms")
    assert "2-core x86_64 CPU (Test CPU, AVX2), 2 thread(s), torch 2.13.0, 2026-01-02" == cpu.env
    assert cuda.result == "not yet measured on CUDA"
    assert view.notes == []
    assert view.reported == ["“3x faster” on NVIDIA V100: “Pytorch技巧” (Chinese blog post)"]
    zh = benchview.tip_view(tip, files, "zh", LABELS["zh"], SEEDS)
    assert zh is not None and zh.rows[0].result.startswith("**提速 2.00×**")
    assert zh.rows[1].result == "尚未在 CUDA 上测量"


def test_a_slower_after_form_is_said_on_the_page() -> None:
    tip = _bench_tip()
    files = {"cpu": _results({"synthetic-tip": _tip_result(tip, _time(1e-3, 2e-3, 0.45, 0.55))})}
    view = benchview.tip_view(tip, files, "en", LABELS["en"], SEEDS)
    assert view is not None
    assert view.rows[0].result == "**2.00× slower** (1.82–2.22)"
    (note,) = view.notes
    assert note.kind == "warning" and "does not hold" in note.body


def test_not_measurable_and_stale_results_are_labelled() -> None:
    reason = {"en": "TF32 needs an Ampere GPU.", "zh": "TF32 需要 Ampere GPU。"}
    tip = _bench_tip(not_measurable={"devices": ["cpu"], "reason": reason})
    view = benchview.tip_view(tip, {}, "en", LABELS["en"], SEEDS)
    assert view is not None
    assert view.rows[0].result == "not measurable on CPU: TF32 needs an Ampere GPU."
    fresh = _bench_tip()
    stale = _tip_result(fresh, _time(2e-3, 1e-3, 1.8, 2.1)).model_copy(update={"code": "0" * 12})
    view = benchview.tip_view(
        fresh, {"cpu": _results({"synthetic-tip": stale})}, "en", LABELS["en"], SEEDS
    )
    assert view is not None and "earlier benchmark code" in view.rows[0].result


def test_memory_rows_come_first_for_memory_tips() -> None:
    what = {"en": "optimizer state", "zh": "优化器状态"}
    tip = _bench_tip(kind="memory", memory={"what": what, "before": "2", "after": "1"})
    mem = MemoryResult(before_bytes=2048, after_bytes=1024, ratio=2.0, verdict="less-memory")
    files = {"cpu": _results({"synthetic-tip": _tip_result(tip, _time(1e-3, 1e-3, 0.9, 1.1), mem)})}
    view = benchview.tip_view(tip, files, "en", LABELS["en"], SEEDS)
    assert view is not None
    assert view.rows[0].result == "**2.00× less memory** (optimizer state)"
    assert (view.rows[0].before, view.rows[0].after) == ("2.0 KiB", "1.0 KiB")
    assert view.rows[1].result.startswith("time: **no significant difference**")
    assert view.notes == []  # the memory claim held


def _chart(html: str) -> ET.Element:
    """The chart's HTML is well-formed XML: parse it as such."""
    root = ET.fromstring(html)
    assert root.tag == "figure" and "bench-chart" in root.get("class", "").split()
    return root


def _with_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [el for el in root.iter() if cls in el.get("class", "").split()]


def _style(el: ET.Element) -> dict[str, float]:
    """``left:25.00%;width:40.00%`` -> {"left": 25.0, "width": 40.0}"""
    return {
        k.strip(): float(v.strip().rstrip("%"))
        for k, v in (p.split(":") for p in el.get("style", "").split(";") if p)
    }


LEGEND = {"good": "faster", "bad": "slower", "same": "no significant difference", "cut": "cut"}


def test_chart_is_well_formed_html_with_one_row_per_bar() -> None:
    bars = [
        Bar("Use the `fast` form", 2.0, 1.8, 2.2, "faster", "../tips/fast-tip/"),
        Bar("slow-tip", 0.5, 0.45, 0.55, "slower"),
        Bar("same-tip <&>", 1.0, 0.9, 1.1, "no-difference"),
    ]
    root = _chart(bar_chart(bars, "Speed-up", "ratio", LEGEND))
    rows = _with_class(root, "bench-row")
    assert [r.get("class") for r in rows] == [
        "bench-row bench-row--good",
        "bench-row bench-row--bad",
        "bench-row bench-row--same",
    ]
    assert len(_with_class(root, "bench-whisker")) == 3
    text = "".join(root.itertext())
    assert "same-tip <&>" in text and "2.00×" in text and "1/2.00×" in text
    # Labels: inline code rendered, the link kept, no raw backticks.
    (link,) = rows[0].iter("a")
    assert link.get("href") == "../tips/fast-tip/" and link.find("code").text == "fast"  # type: ignore[union-attr]
    assert "`" not in text
    # A legend for the three colours (the break mark only when a bar is cut).
    assert [k.text for k in _with_class(root, "bench-key")] == list(LEGEND.values())[:3]
    # Log scale: 2× and 1/2× sit at the same distance from the 1× line.
    one = _style(_with_class(rows[0], "bench-one")[0])["left"]
    fast, slow = (_style(_with_class(r, "bench-bar")[0]) for r in rows[:2])
    assert fast["left"] == pytest.approx(one) and slow["left"] + slow["width"] == pytest.approx(one)
    assert fast["width"] == pytest.approx(slow["width"], abs=0.02)
    _chart(bar_chart([], "empty", "ratio"))  # no bars: still well formed


def test_chart_axis_reaches_the_largest_ratio_and_cuts_only_outliers() -> None:
    def ticks(root: ET.Element) -> list[str]:
        return [t.text or "" for t in _with_class(root, "bench-tick")]

    def inside(root: ET.Element) -> bool:
        return all(
            0 <= s["left"] and s["left"] + s["width"] <= 100 + 1e-6
            for s in map(_style, _with_class(root, "bench-bar"))
        )

    # 104× and 8.7×: no outlier, the axis reaches 128× and no bar is cut.
    mem = [Bar("a", 104.0, 104.0, 104.0, "less-memory"), Bar("b", 8.7, 8.7, 8.7, "less-memory")]
    root = _chart(bar_chart(mem, "t", "a", LEGEND))
    assert "128×" in ticks(root) and "256×" not in ticks(root)
    assert not _with_class(root, "bench-cut") and inside(root)
    assert "cut" not in [k.text for k in _with_class(root, "bench-key")]
    # 5000× beside 1.5×: cut with a break mark (its label keeps the value); the axis stays short.
    bars = [Bar("huge", 5000.0, 4000.0, 6000.0, "faster"), Bar("x", 1.5, 1.4, 1.6, "faster")]
    root = _chart(bar_chart(bars, "t", "a", LEGEND))
    assert ticks(root)[-1] == "2×"
    huge, small = _with_class(root, "bench-row")
    assert "bench-row--cut" in huge.get("class", "") and _with_class(huge, "bench-cut")
    assert not _with_class(small, "bench-cut")
    assert "5000×" in "".join(huge.itertext()) and inside(root)
    assert [k.text for k in _with_class(root, "bench-key")][-1] == "cut"  # now in the legend
    # 4865× beside 72×: both far beyond 64×, the axis reaches 128× and only 4865× is cut.
    bars = [Bar("a", 4865.0, 4800.0, 4900.0, "faster"), Bar("b", 72.2, 70.0, 74.0, "faster")]
    root = _chart(bar_chart(bars, "t", "a"))
    assert ticks(root)[-1] == "128×" and len(_with_class(root, "bench-cut")) == 1
    # Many bars around 1.3×-4× and two micro-benchmarks (543×, 64×): beyond 16× the upper
    # quartile, both are cut, and the axis stays where most bars are.
    ratios = [543.0, 64.0, 4.0, 3.0, 2.5, 2.0, 1.5, 1.3]
    bars = [Bar(str(r), r, r, r, "faster") for r in ratios]
    root = _chart(bar_chart(bars, "t", "a"))
    assert ticks(root)[-1] == "64×" and len(_with_class(root, "bench-cut")) == 1
    bars = [Bar(str(r), r, r, r, "faster") for r in [543.0, *ratios[2:]]]
    root = _chart(bar_chart(bars, "t", "a"))
    assert ticks(root)[-1] == "4×" and len(_with_class(root, "bench-cut")) == 1
    # After keeps nothing: an infinite ratio, drawn to the edge, cut, with its own label.
    freed = Bar("freed", math.inf, math.inf, math.inf, "less-memory", value_text="none left")
    root = _chart(bar_chart([freed, mem[1]], "t", "a"))
    (bar,) = [_style(b) for b in _with_class(root, "bench-bar")][:1]
    assert bar["left"] + bar["width"] == pytest.approx(100)
    assert _with_class(root, "bench-cut") and "none left" in "".join(root.itertext())


def test_pages_show_a_measured_section_and_the_summary(tips: list[Tip], tmp_path: Path) -> None:
    from generator.site.pages import page_files

    files = page_files(tips)
    for suffix in (".md", ".zh.md"):
        summary = files[paths.DOCS / f"benchmarks{suffix}"]
        assert "{ #method }" in summary and "{ #composer }" in summary
        assert "{{" not in summary and "{%" not in summary
        if "cpu" in load_all():
            assert summary.count('<figure class="bench-chart') >= 1
        for tip in tips:
            page = files[paths.DOCS / "tips" / f"{tip.id}{suffix}"]
            claims = bool({"speed", "memory"} & set(tip.impact))
            assert ("{ #measured }" in page) == (claims or tip.bench is not None), tip.id


# --- measuring (tiny, synthetic) -----------------------------------------------------------


def test_measure_tip_times_both_forms_and_records_failures() -> None:
    from generator.bench.memory import saved_tensor_bytes, tensor_bytes
    from generator.bench.runner import Plan, measure_tip

    plan = Plan(quick=True, replicates=2, min_run_time_s=0.001)
    tip = _bench_tip(
        setup="x = torch.ones(8)",
        before="sum(range(200))",
        after="sum(range(2))",
        memory={
            "what": {"en": "x", "zh": "字节"},
            "before": "tensor_bytes(x, x[:2])",
            "after": "0",
        },
    )
    res = measure_tip(tip, "cpu", plan, num_threads=1)
    assert res.error is None and res.time is not None and res.memory is not None
    assert len(res.time.before.replicate_medians_s) == 2
    assert res.time.low <= res.time.ratio <= res.time.high
    assert res.memory.before_bytes == 32 and res.memory.ratio is None  # a view counts once
    broken = measure_tip(_bench_tip(setup="raise RuntimeError('boom')"), "cpu", plan, 1)
    assert broken.error == "RuntimeError: boom" and broken.time is None

    import torch

    lin = torch.nn.Linear(4, 4)
    opt = torch.optim.Adam(lin.parameters())
    lin(torch.ones(2, 4)).sum().backward()
    opt.step()
    params = tensor_bytes(*lin.parameters())  # weights only: no .grad on the tensors themselves
    assert 2 * params <= tensor_bytes(opt) <= 2 * params + 64  # exp_avg, exp_avg_sq (+ step)
    x = torch.ones(3, 4, requires_grad=True)
    assert saved_tensor_bytes(lambda: lin(x).relu().sum()) > 0
    assert saved_tensor_bytes(lambda: (lin.weight * 2).sum()) == 0  # parameters do not count


def test_bench_cli_errors_are_one_line(tmp_path: Path) -> None:
    proc = run_cli("bench", "no-such-tip", "--no-progress", "--out", str(tmp_path / "x.json"))
    assert proc.returncode == 1 and "no tip with id" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run_cli("bench", "--device", "cuda", "--no-progress", "--out", str(tmp_path / "c.json"))
    assert "Traceback" not in proc.stderr
    import torch

    if not torch.cuda.is_available():
        assert proc.returncode == 2 and "no CUDA GPU here" in proc.stderr
        assert not (tmp_path / "c.json").exists()


def test_composer_overhead_is_rendered_from_its_file_or_said_missing(tmp_path: Path) -> None:
    path = tmp_path / "compose-overhead-cpu.json"
    assert summary.compose_overhead("en", LABELS["en"], path) is None
    data = {
        "date": "2026-01-02",
        "cpu": "Test CPU",
        "cores": 2,
        "torch_threads": 2,
        "torch": "2.13.0",
        "workload": "conv net | width 32",
        "generated_samples_per_s": 980.0,
        "minimal_samples_per_s": 1000.0,
        "ratio": 0.98,
        "overhead_percent": 2.0,
        "target_overhead_percent": 2.0,
        "pair_ratios": [0.97, 0.99],
        "command": "python benchmarks/compose_overhead.py",
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    view = summary.compose_overhead("en", LABELS["en"], path)
    assert view is not None
    rows = dict(view.rows)
    assert rows["Generated train.py"] == "980 samples/s"
    assert rows["Range of the ratio over pairs of runs"] == "0.970–0.990"
    assert rows["Target"] == "at most 2.0 %: met"
    assert "\\|" in view.workload  # a pipe cannot break the table
    zh = summary.compose_overhead("zh", LABELS["zh"], path)
    assert zh is not None and "目标" in dict(zh.rows)


# --- sizes, regimes and the results format -------------------------------------------------


def call_through(fn, x):  # a frame from another module, for torch.compile
    """Call ``fn(x)``: compiled, this frame's globals differ from those of ``fn``."""
    return fn(x)


def _sized_tip(**bench: object) -> Tip:
    sized = {
        "sizes": {
            "cpu": [
                {"regime": "launch-bound", "values": {"n": 4}},
                {"regime": "compute-bound", "values": {"n": 64}},
            ],
            "cuda": [{"values": {"n": 1 << 20}}],
        },
        "setup": "assert isinstance(n, int)\nx = torch.ones(n)",
        "before": "x + 1",
        "after": "x.add_(1)",
    }
    return _bench_tip(**(sized | bench))


def test_an_older_results_file_is_read_as_the_default_regime(tmp_path: Path) -> None:
    tip = _bench_tip()
    current = _results({"synthetic-tip": _tip_result(tip, _time(2e-3, 1e-3, 1.8, 2.1))})
    data = json.loads(dumps(current))
    data["schema_version"] = 1
    data["results"] = {k: v["default"] for k, v in data["results"].items()}
    for res in data["results"].values():
        del res["sizes"]  # format 1 had no sizes
    for key in ("gpu_memory_bytes", "gpu_count", "gpu_driver", "cudnn"):
        del data["environment"][key]
    path = tmp_path / "cpu.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert read_results(path) == current
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(UserError, match="not a JSON results file"):
        read_results(path)


def test_code_hash_covers_the_sizes_of_its_device_only() -> None:
    plain = _bench_tip()
    sized = _sized_tip(setup=plain.bench.setup)  # type: ignore[union-attr]
    assert code_hash(plain, "cpu") == code_hash(plain, "cuda")  # no sizes: the code alone
    assert code_hash(sized, "cpu") != code_hash(plain, "cpu")
    assert code_hash(sized, "cuda") != code_hash(sized, "cpu")
    bigger = sized.bench.sizes.model_dump()  # type: ignore[union-attr]
    bigger["cuda"][0]["values"]["n"] = 1 << 22
    resized = _bench_tip(**{**sized.bench.model_dump(), "sizes": bigger})  # type: ignore[union-attr]
    assert code_hash(resized, "cuda") != code_hash(sized, "cuda")  # a CUDA result goes stale
    assert code_hash(resized, "cpu") == code_hash(sized, "cpu")  # the CPU one does not


@pytest.mark.parametrize("name", ["device", "torch", "peak_bytes"])
def test_a_size_may_not_shadow_a_predefined_name(tmp_path: Path, name: str) -> None:
    data = example_record()
    data["bench"] = {
        "sizes": {"cpu": [{"values": {name: 1}}]},
        "setup": "x = 1",
        "before": "x + 1",
        "after": "x + 2",
    }
    _, problems = validate([write_record(tmp_path, "shadow.yaml", data)])
    assert any("predefined in the bench namespace" in p.reason for p in problems), problems


def test_each_regime_is_measured_with_its_sizes_defined_before_setup(tmp_path: Path) -> None:
    from generator.bench import runner as bench

    tip = _sized_tip(
        kind="memory",
        memory={"what": {"en": "x", "zh": "字节"}, "before": "tensor_bytes(x)", "after": "0"},
    )
    run = bench.run([tip], "cpu", quick=True, replicates=2, progress=False)
    assert run.schema_version == 2
    (regimes,) = run.results.values()
    assert list(regimes) == ["launch-bound", "compute-bound"]
    for regime, n in (("launch-bound", 4), ("compute-bound", 64)):
        res = regimes[regime]  # type: ignore[index]
        assert res.error is None, res.error
        assert res.sizes == {"n": n}
        assert res.memory is not None and res.memory.before_bytes == 4 * n
        assert res.code == code_hash(tip, "cpu")
    # One unnamed size: the tip runs once, as the default regime.
    plain = bench.run([_bench_tip()], "cpu", quick=True, replicates=2, progress=False)
    assert list(plain.results["synthetic-tip"]) == ["default"]
    assert plain.results["synthetic-tip"]["default"].sizes == {"n": 4}  # type: ignore[index]


def test_the_bench_namespace_is_an_importable_module_that_torch_compile_can_use() -> None:
    import sys

    from generator.bench.namespace import NAMESPACE_MODULE
    from generator.bench.runner import Plan, measure_tip

    setup = f"""
import functools, importlib, pickle
me = importlib.import_module(__name__)
assert __name__ == {NAMESPACE_MODULE!r} and me.__dict__ is globals()


def double(t):
    return t * 2


assert pickle.loads(pickle.dumps(double)) is double
from tests.bench.test_bench import call_through
# The compiled frame (call_through) has other globals than double: dynamo imports
# double's module by name to inline it.
compiled = torch.compile(functools.partial(call_through, double), backend="eager")
assert torch.equal(compiled(torch.ones(3)), torch.full((3,), 2.0))
"""
    tip = _bench_tip(setup=setup, before="double(torch.ones(2))", after="compiled(torch.ones(3))")
    plan = Plan(quick=True, replicates=1, min_run_time_s=0.001)
    res = measure_tip(tip, "cpu", plan, num_threads=1)
    assert res.error is None, res.error
    assert NAMESPACE_MODULE not in sys.modules  # registered only while a tip is measured


def test_bench_checks_out_before_measuring_anything(tmp_path: Path) -> None:
    import time

    start = time.perf_counter()
    proc = run_cli("bench", "--out", "/nonexistent/dir/x.json")  # every tip, progress bar on
    elapsed = time.perf_counter() - start
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        "error: cannot write /nonexistent/dir/x.json: the folder /nonexistent/dir does not exist\n"
    )
    assert "bench cpu" not in proc.stderr and proc.stdout == ""  # no bar, no tip measured
    assert elapsed < 10  # a loose bound: nothing was measured
    proc = run_cli("bench", "--out", str(tmp_path))
    assert proc.returncode == 2 and "is a folder" in proc.stderr and proc.stdout == ""
    bad = tmp_path / "broken.json"
    bad.write_text("{", encoding="utf-8")
    proc = run_cli("bench", "torch-compile-fusion", "--out", str(bad))
    assert proc.returncode == 2 and "not a JSON results file" in proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert bad.read_text(encoding="utf-8") == "{"  # left as it was


def test_an_interrupted_run_keeps_the_tips_it_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator import cli
    from generator.records import load as records

    first = _bench_tip().model_copy(update={"id": "first-tip"})
    second = _bench_tip(setup="raise KeyboardInterrupt").model_copy(update={"id": "second-tip"})
    monkeypatch.setattr(records, "get_tip", {"first-tip": first, "second-tip": second}.get)
    out = tmp_path / "cpu.json"
    argv = ["bench", "first-tip", "second-tip", "--quick", "--replicates", "2", "--no-progress"]
    assert cli.main([*argv, "--out", str(out)]) == 130
    assert "keeps the 1 tip(s) measured so far" in capsys.readouterr().err
    kept = read_results(out)
    assert list(kept.results) == ["first-tip"]
    assert kept.results["first-tip"]["default"].time is not None  # type: ignore[index]
    assert [p.name for p in tmp_path.iterdir()] == ["cpu.json"]  # no temporary file left


def test_a_full_run_keeps_old_results_until_it_finishes(tmp_path: Path) -> None:
    from generator.bench.results import ResultsWriter

    tip = _bench_tip()
    old_a = _tip_result(tip, _time(2e-3, 1e-3, 1.8, 2.1))
    new_a = _tip_result(tip, _time(3e-3, 1e-3, 2.8, 3.1))
    path = tmp_path / "cpu.json"
    old = _results({"a": old_a, "b": old_a})
    writer = ResultsWriter(path, old, replace=True)
    writer(_results({"a": new_a}))  # after the first tip of a run over every tip
    assert read_results(path).results == {"a": {"default": new_a}, "b": {"default": old_a}}
    writer.finish(_results({"a": new_a}))
    assert read_results(path).results == {"a": {"default": new_a}}
    other = ResultsWriter(path, _results({"b": old_a}, cpu_model="Another CPU"), replace=True)
    other(_results({"a": new_a}))  # another machine: its results cannot stay beside ours
    assert set(read_results(path).results) == {"a"}


def test_the_environment_records_the_gpu_driver_when_it_can(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from generator.bench import machine as bench

    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)  # not installed
    monkeypatch.setenv("PATH", str(tmp_path))
    assert bench.gpu_driver() is None  # neither pynvml nor nvidia-smi: no driver, no error
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 570.86.15\n", encoding="utf-8")
    smi.chmod(0o755)
    assert bench.gpu_driver() == "570.86.15"
    env = bench.environment("cpu", 1)
    assert env.gpu_name is None and env.gpu_driver is None and env.torch


# --- CUDA results and regimes on the site --------------------------------------------------


def _cuda_env() -> dict[str, object]:
    return dict(
        gpu_name="NVIDIA H100 80GB HBM3",
        gpu_compute_capability="9.0",
        gpu_memory_bytes=80 * 2**30,
        gpu_count=1,
        gpu_driver="570.86.15",
        cuda="13.0",
        cudnn="91300",
        torch="2.11.0+cu130",
    )


def test_tip_view_shows_each_regime_with_its_sizes_and_the_gpu() -> None:
    tip = _bench_tip()
    launch = _tip_result(tip, _time(1e-3, 1e-3, 0.95, 1.02), device="cuda", sizes={"n": 8})
    compute = _tip_result(tip, _time(8e-3, 4e-3, 1.9, 2.1), device="cuda", sizes={"n": 4096})
    files = {
        "cuda": _results(
            {"synthetic-tip": {"compute-bound": compute, "launch-bound": launch}},
            device="cuda",
            **_cuda_env(),
        )
    }
    view = benchview.tip_view(tip, files, "en", LABELS["en"], SEEDS)
    assert view is not None and view.regimes
    cpu, small, large = view.rows
    assert cpu.result == "not yet measured on CPU"
    assert (small.device, small.sizes) == ("CUDA, launch-bound", "`n=8`")
    assert (large.device, large.sizes) == ("CUDA, compute-bound", "`n=4096`")
    assert large.result == "**2.00× faster** (1.90–2.10)"
    assert large.env == (
        "NVIDIA H100 80GB HBM3 (compute capability 9.0, 80 GiB, driver 570.86.15), "
        "torch 2.11.0+cu130, CUDA 13.0, 2026-01-02"
    )
    (note,) = view.notes  # the launch-bound null result, named with its regime
    assert note.title == "No measurable benefit on CUDA, launch-bound"
    zh = benchview.tip_view(tip, files, "zh", LABELS["zh"], SEEDS)
    assert zh is not None
    assert [r.device for r in zh.rows[1:]] == ["CUDA，启动开销受限", "CUDA，计算受限"]


def _write_cuda_json(folder: Path, tip: Tip) -> None:
    launch = _tip_result(tip, _time(1e-3, 1e-3, 0.95, 1.02), device="cuda", sizes={"batch": 8})
    compute = _tip_result(tip, _time(8e-3, 4e-3, 1.9, 2.1), device="cuda", sizes={"batch": 256})
    file = _results(
        {tip.id or "": {"launch-bound": launch, "compute-bound": compute}},
        device="cuda",
        **_cuda_env(),
    )
    (folder / "cuda.json").write_text(dumps(file), encoding="utf-8")


def test_pages_show_cuda_results_and_a_chart_per_device(
    bench_tips: list[Tip], tips: list[Tip], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.bench import results as results_module
    from generator.site.pages import benchmarks_page, tip_page

    tip = next(
        t
        for t in bench_tips
        if t.bench.kind == "time" and "cuda" in t.bench.measured_devices()  # type: ignore[union-attr]
    )
    cpu_tip = next(
        t
        for t in bench_tips
        if t.bench.kind == "time" and t.bench.measured_devices() == ["cpu", "cuda"]  # type: ignore[union-attr]
    )
    cpu = _results({cpu_tip.id or "": _tip_result(cpu_tip, _time(2e-3, 1e-3, 1.8, 2.1))})
    (tmp_path / "cpu.json").write_text(dumps(cpu), encoding="utf-8")
    _write_cuda_json(tmp_path, tip)
    monkeypatch.setattr(results_module, "RESULTS_DIR", tmp_path)  # the pages read files here
    page = tip_page(tip, "en", tips)
    assert "| CUDA, compute-bound | `batch=256` | **2.00× faster** (1.90–2.10) |" in page
    assert "| CUDA, launch-bound | `batch=8` |" in page
    assert "NVIDIA H100 80GB HBM3 (compute capability 9.0" in page
    assert "compute-bound*, large enough" in page  # the regimes are explained
    assert "not yet measured on CUDA" not in page
    zh = tip_page(tip, "zh", tips)
    assert "| CUDA，计算受限 | `batch=256` | **提速 2.00×**" in zh
    summary = benchmarks_page(tips, "en")
    assert "{{" not in summary and "{%" not in summary
    cpu_part, cuda_part = summary.split("{ #cpu }")[1].split("{ #cuda }")
    cuda_part = cuda_part.split("{ #composer }")[0]
    for part in (cpu_part, cuda_part):  # one chart per device
        assert part.count('<figure class="bench-chart') == 1
    start = cuda_part.index('<figure class="bench-chart')
    root = _chart(cuda_part[start : cuda_part.index("</figure>", start) + len("</figure>")])
    labels = "".join(root.itertext())
    title = plain_text(tip.title.en)
    assert f"{title} (compute-bound)" in labels and f"{title} (launch-bound)" in labels
    assert "NVIDIA H100 80GB HBM3" in cuda_part and "`batch=256`" in cuda_part
    assert "(compute-bound) |" in cuda_part  # the table row names the regime
    assert "计算受限" in benchmarks_page(tips, "zh")


def test_pages_say_not_yet_measured_on_cuda_without_cuda_json(
    bench_tips: list[Tip], tips: list[Tip], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.bench import results as results_module
    from generator.site.pages import benchmarks_page, tip_page

    monkeypatch.setattr(results_module, "RESULTS_DIR", tmp_path)  # no results file at all
    tip = next(t for t in bench_tips if "cuda" in t.bench.measured_devices())  # type: ignore[union-attr]
    assert "| CUDA |  | not yet measured on CUDA |" in tip_page(tip, "en", tips)
    assert "尚未在 CUDA 上测量" in tip_page(tip, "zh", tips)
    summary = benchmarks_page(tips, "en")
    assert "bench-chart" not in summary
    assert "Not yet measured on CUDA: no results file" in summary


#: Sizes for a synthetic bench (records must give them for each measured device).
SIZES = {"cpu": [{"values": {"n": 4}}], "cuda": [{"values": {"n": 4096}}]}


def test_chart_labels_are_the_tips_titles_in_the_page_language(tips: list[Tip]) -> None:
    from generator.site.pages import benchmarks_page

    if "cpu" not in load_all():
        pytest.skip("benchmarks/results/cpu.json not written yet")
    ids = {t.id for t in tips}
    for lang in ("en", "zh"):
        page = benchmarks_page(tips, lang)
        titles = {plain_text(t.title.get(lang)) for t in tips}
        charts = re.findall(r'<figure class="bench-chart.*?</figure>', page)
        assert charts, lang
        labels = [
            "".join(el.itertext())
            for chart in charts
            for el in _with_class(_chart(chart), "bench-label")
        ]
        assert labels and not ids & set(labels), lang
        for label in labels:  # a title, maybe with its regime and a note under it
            assert any(label.startswith(title) for title in titles), (lang, label)
        if lang == "zh":
            assert all(re.search(r"[\u4e00-\u9fff]", label) for label in labels)
            assert "改进后写法在 CPU 上的加速比" in page and "更快" in page  # caption, legend


def test_a_memory_tip_slower_by_design_says_why() -> None:
    from generator.site.pages import benchmarks_page

    what = {"en": "activations saved for backward", "zh": "为反向传播保存的激活值"}
    tip = _bench_tip(kind="memory", memory={"what": what, "before": "4", "after": "1"}, sizes=SIZES)
    mem = MemoryResult(before_bytes=4096, after_bytes=1024, ratio=4.0, verdict="less-memory")
    slower = _time(1e-3, 15.7e-3, 1 / 16.5, 1 / 15)
    files = {"cpu": _results({"synthetic-tip": _tip_result(tip, slower, mem)})}
    page = benchmarks_page([tip], "en", files)
    assert "15.7× slower** (15.0–16.5): slower by design, the price of the memory saved" in page
    assert '!!! info "Slower by design"' in page and "recomputing activations" in page
    assert "costs time: 15.7× slower, by design (see below)" in page  # beside its bar
    zh = benchmarks_page([tip], "zh", files)
    assert "有意的取舍，是省下显存/内存的代价" in zh and "代价：耗时增至 15.7 倍" in zh
    view = benchview.tip_view(tip, files, "en", LABELS["en"], SEEDS)
    assert view is not None
    assert view.rows[1].result.startswith("time: **15.7× slower** (15.0–16.5): slower by design")
    # A time tip that is slower is a claim that did not hold: no excuse is made for it.
    time_tip = _bench_tip(sizes=SIZES)
    files = {"cpu": _results({"synthetic-tip": _tip_result(time_tip, slower)})}
    assert "by design" not in benchmarks_page([time_tip], "en", files)


def test_verified_line_says_what_ran_where_from_the_results(tips: list[Tip]) -> None:
    from generator.site.pages import tip_page

    tip = _bench_tip(sizes=SIZES)
    assert tip.hardware.devices[:2] == ["cpu", "cuda"]
    fresh = _tip_result(tip, _time(2e-3, 1e-3, 1.8, 2.1))
    cpu = {"cpu": _results({"synthetic-tip": fresh})}
    line = benchview.verified(tip, cpu, "en", LABELS["en"])
    assert line is not None
    assert line.startswith("CPU ✓ (torch 2.13.0, 2026-01-02) · CUDA GPU: not yet")
    assert benchview.verified(tip, cpu, "zh", LABELS["zh"]).startswith(  # type: ignore[union-attr]
        "CPU ✓（torch 2.13.0，2026-01-02） · CUDA GPU：尚未验证"
    )
    # Stale or failed results, or none: CPU is vouched for by the test suite only.
    stale = fresh.model_copy(update={"code": "0" * 12})
    failed = fresh.model_copy(update={"error": "RuntimeError: boom", "time": None})
    for results in (
        {},
        {"cpu": _results({"synthetic-tip": stale})},
        {"cpu": _results({"synthetic-tip": failed})},
    ):
        assert benchview.verified(tip, results, "en", LABELS["en"]).startswith(  # type: ignore[union-attr]
            "CPU ✓ (test suite) · CUDA GPU: not yet"
        )
    # A CUDA results file with this tip: CUDA gets its own torch and date.
    cuda_result = _tip_result(tip, _time(2e-3, 1e-3, 1.8, 2.1), device="cuda")
    both = cpu | {"cuda": _results({"synthetic-tip": cuda_result}, device="cuda", **_cuda_env())}
    line = benchview.verified(tip, both, "en", LABELS["en"])
    assert line is not None and "CUDA GPU ✓ (torch 2.11.0+cu130, 2026-01-02)" in line
    # On the page: right under the badges, before the code.
    page = tip_page(tip, "en", tips, cpu)
    verified = page.index("[Verified](#tested-on): CPU ✓ (torch 2.13.0, 2026-01-02)")
    assert page.index('<div class="tip-badges"') < verified < page.index("## Code { #code }")
    advice = next((t for t in tips if not t.variants()), None)
    if advice is not None:
        assert benchview.verified(advice, cpu, "en", LABELS["en"]) is None


# --- badges and the catalog filter ---------------------------------------------------------


def _badge(page: str, kind: str) -> str:
    match = re.search(rf'<span class="tip-badge tip-badge--{kind}"[^>]*>([^<]*)</span>', page)
    assert match, kind
    return match.group(1)


def test_badges_separate_where_a_tip_runs_from_where_it_helps(tips: list[Tip]) -> None:
    from generator.records.taxonomy import DEVICES
    from generator.site.pages import tip_page, unmeasured_helps

    differ = 0
    for tip in tips:
        page = tip_page(tip, "en", tips, {})
        runs, helps = _badge(page, "runs-on"), _badge(page, "helps-on")
        where = "Runs on: " if tip.variants() else "Applies to: "  # advice only: nothing ran
        assert runs == where + " · ".join(DEVICES[d].en for d in tip.hardware.devices)
        unmeasured = unmeasured_helps(tip, {})  # no results given: every GPU claim is reported
        assert helps == "Helps on: " + " · ".join(
            DEVICES[d].en + LABELS["en"]["helps_on_unmeasured"] * (d in unmeasured)
            for d in tip.hardware.helps_on
        )
        differ += tip.hardware.devices != tip.hardware.helps_on
        zh = tip_page(tip, "zh", tips, {})
        assert _badge(zh, "helps-on").startswith("受益硬件：")
    assert differ, "no tip runs somewhere it does not help: the badges would not show it"
    gpu_only = [t for t in tips if "cpu" in t.hardware.devices and "cpu" not in t.hardware.helps_on]
    for tip in gpu_only:  # e.g. TF32: tested on CPU, pays off on a GPU only
        page = tip_page(tip, "en", tips, {})
        assert "CPU" in _badge(page, "runs-on") and "CPU" not in _badge(page, "helps-on")


def test_catalog_filters_on_where_a_tip_helps(tips: list[Tip]) -> None:
    from generator.site.pages import catalog_page

    catalog = catalog_page(tips, "en")
    assert '<select id="filter-helps-on" data-filter="helps"' in catalog
    assert '<option value="multi-gpu">several GPUs</option>' in catalog
    helps = {
        tip_id: value.split()
        for value, tip_id in re.findall(
            r'data-helps="([^"]*)"[^>]*>\n<td><a href="../tips/([a-z0-9-]+)/">', catalog
        )
    }
    assert helps == {t.id: list(t.hardware.helps_on) for t in tips}
    ddp = [t.id for t in tips if "ddp" in t.tags]
    assert ddp and any("multi-gpu" in helps[i] for i in ddp)  # "several GPUs" matches DDP tips
