"""The bench machinery: statistics on synthetic timings, verdicts, the results file, the bench
section of the schema, and how results are rendered (tip pages, summary page, SVG chart).

Nothing here measures for real: the full measurement is `python -m generator bench`.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from generator import benchview, paths
from generator.chart import Bar, bar_chart
from generator.errors import UserError
from generator.records import load_tips, validate
from generator.results import (
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
from generator.schema import Tip
from generator.site import LABELS
from generator.stats import (
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
from generator.taxonomy import SEEDS
from tests.helpers import example_record, run_cli, write_record

TIPS = load_tips()
BENCH_TIPS = [t for t in TIPS if t.bench is not None]
SVG = "{http://www.w3.org/2000/svg}"


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
        (Ratio(1.5, 0.9, 2.0), "no-difference"),  # the median alone would say faster
        (Ratio(0.8, 0.6, 1.1), "no-difference"),  # the median alone would say slower
        (Ratio(1.02, 1.01, 1.025), "no-difference"),  # tight but within the tolerance
        (Ratio(1.1, 1.05, 1.2), "faster"),
        (Ratio(0.9, 0.85, 0.95), "slower"),
    ],
    ids=["faster", "slower", "overlap-high", "overlap-low", "tiny", "small-faster", "small-slower"],
)
def test_the_interval_decides_the_time_verdict(ratio: Ratio, verdict: str) -> None:
    assert time_verdict(ratio) == verdict


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


def _results(tips: dict[str, TipResult], device: str = "cpu", **env: object) -> ResultsFile:
    return ResultsFile(
        schema_version=1,
        device=device,  # type: ignore[arg-type]
        environment=_env(**env),
        settings=Settings(quick=True, replicates=5, min_run_time_s=0.05, tolerance=0.03),
        results=tips,
    )


def _tip_result(tip: Tip, time: TimeResult, memory: MemoryResult | None = None) -> TipResult:
    assert tip.bench is not None
    return TipResult(
        kind=tip.bench.kind,
        code=code_hash(tip),
        measured_at="2026-01-02T03:04:05+00:00",
        time=time,
        memory=memory,
    )


def _bench_tip(**bench: object) -> Tip:
    data = example_record()
    data["bench"] = {
        "setup": "x = torch.ones(4)",
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
    assert data["environment"]["cpu_model"] == "Test CPU" and data["schema_version"] == 1
    data["results"]["synthetic-tip"]["speed"] = 3  # a figure typed in by hand, under a new key
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


def test_committed_results_are_valid_and_fresh() -> None:
    by_id = {t.id: t for t in TIPS}
    for device, file in load_all().items():
        assert file.device == device
        for tip_id, res in file.results.items():
            tip = by_id.get(tip_id)
            assert tip is not None and tip.bench is not None, (
                f"{device}.json: {tip_id} has no bench"
            )
            assert res.error is None, f"{device}.json: {tip_id} failed: {res.error}"
            assert res.code == code_hash(tip), (
                f"{tip_id}: bench code changed since it was measured: "
                f"run `python -m generator bench {tip_id} --device {device}`"
            )


def test_every_cpu_measurable_tip_has_a_cpu_result() -> None:
    files = load_all()
    if "cpu" not in files:
        pytest.skip("benchmarks/results/cpu.json not written yet")
    missing = [
        t.id
        for t in BENCH_TIPS
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
    data["bench"] = {"setup": "x = 1", "before": "x + 1", "after": "x + 2"} | bench
    data["bench"] = {k: v for k, v in data["bench"].items() if v is not None}
    path = write_record(tmp_path, "bench-rule.yaml", data)
    _, problems = validate([path])
    assert problems and all(p.field.startswith("bench") for p in problems), problems
    assert any(reason in p.reason for p in problems), problems


def test_a_cpu_measured_bench_needs_a_cpu_tip(tmp_path: Path) -> None:
    data = example_record()
    data["hardware"] = {"devices": ["cuda"], "notes": {"en": "GPU only.", "zh": "仅 GPU。"}}
    data["bench"] = {"setup": "x = 1", "before": "x + 1", "after": "x + 2"}
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


def test_every_speed_or_memory_tip_has_a_bench_section() -> None:
    missing = [t.id for t in TIPS if {"speed", "memory"} & set(t.impact) and t.bench is None]
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
    assert view.reported == ["“3x faster” on NVIDIA V100: Seed document `004_ef0790627b2f324f.txt`"]
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


def test_chart_is_well_formed_svg_with_one_bar_per_tip() -> None:
    bars = [
        Bar("fast-tip", 2.0, 1.8, 2.2, "faster", "../tips/fast-tip/"),
        Bar("slow-tip", 0.5, 0.45, 0.55, "slower"),
        Bar("same-tip <&>", 1.0, 0.9, 1.1, "no-difference"),
    ]
    root = ET.fromstring(bar_chart(bars, "Speed-up", "ratio"))
    assert root.tag == f"{SVG}svg"
    rects = [r for r in root.iter(f"{SVG}rect") if "bar" in r.get("class", "").split()]
    assert [r.get("class") for r in rects] == ["bar bar--good", "bar bar--bad", "bar bar--same"]
    assert len([p for p in root.iter(f"{SVG}path") if p.get("class") == "whisker"]) == 3
    labels = "".join(root.itertext())
    assert "same-tip <&>" in labels and "2.00×" in labels
    # Log scale: 2× and 1/2× sit at the same distance from the 1× line.
    one = next(
        float(line.get("x1", 0))
        for line in root.iter(f"{SVG}line")
        if line.get("class") == "axis-one"
    )
    fast, slow = rects[0], rects[1]
    right = float(fast.get("x", 0)) + float(fast.get("width", 0)) - one
    left = one - float(slow.get("x", 0))
    assert right == pytest.approx(left, abs=0.2)
    ET.fromstring(bar_chart([], "empty", "ratio"))  # no bars: still well formed


def test_chart_axis_is_capped_so_one_huge_ratio_does_not_flatten_the_rest() -> None:
    svg = bar_chart(
        [Bar("huge", 5000.0, 4000.0, 6000.0, "faster"), Bar("x", 1.5, 1.4, 1.6, "faster")], "t", "a"
    )
    root = ET.fromstring(svg)
    width = float(root.get("viewBox", "0 0 0 0").split()[2])
    ticks = [t.text for t in root.iter(f"{SVG}text") if (t.text or "").endswith("×")]
    assert "64×" in ticks and "128×" not in ticks
    assert "5000×" in "".join(root.itertext())  # the label keeps the exact value
    for rect in root.iter(f"{SVG}rect"):
        assert float(rect.get("x", 0)) + float(rect.get("width", 0)) <= width


def test_pages_show_a_measured_section_and_the_summary(tmp_path: Path) -> None:
    from generator.site import page_files

    files = page_files(TIPS)
    for suffix in (".md", ".zh.md"):
        summary = files[paths.DOCS / f"benchmarks{suffix}"]
        assert "{ #method }" in summary and "{ #composer }" in summary
        assert "{{" not in summary and "{%" not in summary
        if "cpu" in load_all():
            assert summary.count('<svg xmlns="http://www.w3.org/2000/svg"') >= 1
        for tip in TIPS:
            page = files[paths.DOCS / "tips" / f"{tip.id}{suffix}"]
            claims = bool({"speed", "memory"} & set(tip.impact))
            assert ("{ #measured }" in page) == (claims or tip.bench is not None), tip.id


# --- measuring (tiny, synthetic) -----------------------------------------------------------


def test_measure_tip_times_both_forms_and_records_failures() -> None:
    from generator.bench import Plan, measure_tip, saved_tensor_bytes, tensor_bytes

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


def test_bench_cli_errors_are_one_line() -> None:
    proc = run_cli("bench", "no-such-tip", "--no-progress")
    assert proc.returncode == 1 and "no tip with id" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run_cli("bench", "--device", "cuda", "--no-progress", "--out", "/nonexistent/x.json")
    assert "Traceback" not in proc.stderr
    import torch

    if not torch.cuda.is_available():
        assert proc.returncode == 2 and "no CUDA GPU here" in proc.stderr


def test_composer_overhead_is_rendered_from_its_file_or_said_missing(tmp_path: Path) -> None:
    path = tmp_path / "compose-overhead-cpu.json"
    assert benchview.compose_overhead("en", LABELS["en"], path) is None
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
    view = benchview.compose_overhead("en", LABELS["en"], path)
    assert view is not None
    rows = dict(view.rows)
    assert rows["Generated train.py"] == "980 samples/s"
    assert rows["Range of the ratio over pairs of runs"] == "0.970–0.990"
    assert rows["Target"] == "at most 2.0 %: met"
    assert "\\|" in view.workload  # a pipe cannot break the table
    zh = benchview.compose_overhead("zh", LABELS["zh"], path)
    assert zh is not None and "目标" in dict(zh.rows)
