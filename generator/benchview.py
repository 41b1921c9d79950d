"""What the site shows of the benchmark results: the "Measured" section of each tip page
and the summary page ``docs/benchmarks.md``, in English and Chinese.

Every figure shown comes from a results file written by ``python -m generator bench``
(:mod:`generator.results`); published figures from the records are shown beside them as
"reported". A device without a results file says "not yet measured", never a number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator import paths
from generator.chart import BAD, GOOD, Bar, bar_chart, fmt_ratio
from generator.results import Environment, ResultsFile, TipResult, code_hash
from generator.schema import Tip
from generator.stats import TOLERANCE, coverage

#: The composer benchmark (generated script vs minimal loop), written by
#: ``benchmarks/compose_overhead.py``; shown on the summary page when present.
COMPOSE_OVERHEAD = paths.ROOT / "benchmarks" / "results" / "compose-overhead-cpu.json"

#: The relative difference never called significant, as the method text shows it.
TOLERANCE_TEXT = f"{TOLERANCE:.0%}"

#: Labels merged into ``generator.site.LABELS``.
LABELS: dict[str, dict[str, str]] = {
    "en": {
        "measured": "Measured",
        "measured_intro": "Timed by `python -m generator bench` with `torch.utils.benchmark` "
        "(warm-up, fixed thread count, interleaved replicates). The ratio is the median of the "
        "replicate speed-ups of the after form, the interval their range; the interval decides "
        "the verdict. [How it is measured](../benchmarks.md#method).",
        "device": "Device",
        "result": "Result",
        "measured_on": "Measured on",
        "bench_faster": "**{ratio}× faster** ({low}–{high})",
        "bench_slower": "**{ratio}× slower** ({low}–{high})",
        "bench_same": "**no significant difference** ({low}×–{high}×)",
        "bench_less": "**{ratio}× less memory** ({what})",
        "bench_less_all": "**none left** ({what})",
        "bench_more": "**{ratio}× more memory** ({what})",
        "bench_mem_same": "**same memory** ({what})",
        "bench_time_of_memory": "time: {result}",
        "bench_not_yet": "not yet measured on {device}",
        "bench_not_measurable": "not measurable on {device}: {reason}",
        "bench_failed": "measurement failed: {error}",
        "bench_no_bench": "not benchmarked yet: this tip has no bench section",
        "bench_stale": "(earlier benchmark code: rerun `python -m generator bench {id}`)",
        "bench_env_cpu": "{cores}-core {arch} CPU ({model}{isa}), {threads} thread(s), "
        "torch {torch}, {date}",
        "bench_env_gpu": "{gpu} (compute capability {cc}), torch {torch}, CUDA {cuda}, {date}",
        "bench_spread": "{median} (IQR {q1}–{q3})",
        "reported": "Reported elsewhere",
        "reported_line": "“{figure}” on {hardware}: {source}",
        "bench_hw_not_stated": "hardware not stated",
        "bench_code": "Benchmark code",
        "workload": "Workload",
        "bench_setup": "setup (run once)",
        "bench_timed_before": "before (timed)",
        "bench_timed_after": "after (timed)",
        "bench_memory_code": "bytes measured",
        "bench_worse_title": "Worse on {device}",
        "bench_worse_body": "On {env}, the after form measured {result}: the claim does not "
        "hold there.",
        "bench_same_title": "No measurable benefit on {device}",
        "bench_same_body": "On {env}, the measurement shows {result}. The benefit may need "
        "other hardware (see Hardware above) or larger workloads.",
        "benchmarks_title": "Benchmarks",
        "benchmarks_intro": "The knowledge base measures its own claims: every speed and memory "
        "tip names a small workload, and `python -m generator bench` times its before and after "
        "form. Figures below come from the committed results files, never typed in by hand; "
        "published figures are shown beside them as reported, with their hardware and source.",
        "method": "Method",
        "method_text": "Each form runs its statement under `torch.utils.benchmark.Timer` "
        "(`blocked_autorange`: warm-up, block size chosen so timer overhead is negligible, CUDA "
        "synchronised around each block) with a fixed number of threads, in interleaved "
        "replicates (before, after, after, before, …), so slow drift of the machine hits both "
        "alike. The ratio is the median over replicates of before ÷ after (above 1: the after "
        "form is faster); the interval is the range of the replicate ratios, which holds the "
        "true median ratio with probability 1 − 2^(1−n) for n replicates, whatever the noise. "
        "The verdict is *faster* when the whole interval lies above 1 + {tol}, *slower* when it "
        "lies below 1 ÷ (1 + {tol}), and *no significant difference* otherwise. Memory figures "
        "are exact byte counts of the tensors the tip is about (optimizer state, activations "
        "saved for backward, …), and on CUDA also the growth of "
        "`torch.cuda.max_memory_allocated()`.",
        "reproduce": "Reproduce",
        "bench_cmd_quick": "every tip measurable on CPU, in about a minute",
        "bench_cmd_one": "one tip again, merged into the file (same settings)",
        "bench_cmd_cuda": "on a machine with a CUDA GPU: benchmarks/results/cuda.json",
        "bench_cmd_out": "full timing (7 replicates of 0.25 s) into another file",
        "settings_line": "{replicates} replicates per form, {run} s of timing each{quick}; "
        "intervals hold the median with probability {cov}.",
        "quick": " (`--quick`)",
        "chart_title": "Speed-up of the after form on {device}",
        "chart_axis": "speed-up of the after form (before ÷ after, log scale; whiskers: interval)",
        "memory_chart_title": "Memory of the before form ÷ memory of the after form on {device}",
        "memory_chart_axis": "before ÷ after bytes (log scale)",
        "time_results": "Time",
        "reported_short": "Reported elsewhere",
        "time_cost": "Time",
        "memory_results": "Memory",
        "kind": "Claim",
        "kind_time": "speed",
        "kind_memory": "memory",
        "not_held": "Claims that did not hold here",
        "not_held_intro": "Tips whose after form was not measurably better on this device. "
        "Negative results are kept, not hidden.",
        "not_held_none": "Every measured claim held on this device.",
        "not_measurable_title": "Not measurable on {device}",
        "device_not_yet": "Not yet measured on {device}: no results file from such a machine. "
        "Run `python -m generator bench --device {key}` there and commit "
        "`benchmarks/results/{key}.json`.",
        "bench_compose_title": "Composer overhead",
        "bench_compose_intro": "The training script written by `python -m generator compose` against "
        "a minimal hand-written loop on the same model and data.",
        "bench_compose_not_yet": "Not yet measured: `benchmarks/results/compose-overhead-cpu.json` "
        "does not exist. Run `python benchmarks/compose_overhead.py` to write it.",
        "quantity": "Quantity",
        "value": "Value",
        "bench_compose_env": "{where}, {cores} cores, {threads} thread(s), torch {torch}, {date}",
        "bench_compose_generated": "Generated train.py",
        "bench_compose_minimal": "Minimal hand-written loop",
        "bench_compose_estimator": "Measure",
        "bench_compose_ratio": "Generated ÷ minimal",
        "bench_compose_overhead": "Overhead of the generated script",
        "bench_compose_target": "Target",
        "bench_compose_within": "at most {target} %: met",
        "bench_compose_above": "at most {target} %: not met",
        "bench_compose_median": "Median ratio over pairs of runs",
        "bench_compose_pairs": "Range of the ratio over pairs of runs",
    },
    "zh": {
        "measured": "实测",
        "measured_intro": "由 `python -m generator bench` 用 `torch.utils.benchmark` 计时"
        "（预热、固定线程数、两种写法交替重复测量）。比值取各次重复中改进后写法加速比的中位数，"
        "区间为各次加速比的范围；结论由区间决定。[测量方法](../benchmarks.md#method)。",
        "device": "设备",
        "result": "结果",
        "measured_on": "测量环境",
        "bench_faster": "**提速 {ratio}×**（{low}–{high}）",
        "bench_slower": "**变慢 {ratio}×**（{low}–{high}）",
        "bench_same": "**无显著差异**（{low}×–{high}×）",
        "bench_less": "**内存减少 {ratio}×**（{what}）",
        "bench_less_all": "**全部释放**（{what}）",
        "bench_more": "**内存增加 {ratio}×**（{what}）",
        "bench_mem_same": "**内存无显著差异**（{what}）",
        "bench_time_of_memory": "耗时：{result}",
        "bench_not_yet": "尚未在 {device} 上测量",
        "bench_not_measurable": "无法在 {device} 上测量：{reason}",
        "bench_failed": "测量失败：{error}",
        "bench_no_bench": "尚未做基准测试：这条技巧还没有 bench 部分",
        "bench_stale": "（基准代码已修改：请重新运行 `python -m generator bench {id}`）",
        "bench_env_cpu": "{cores} 核 {arch} CPU（{model}{isa}），{threads} 个线程，"
        "torch {torch}，{date}",
        "bench_env_gpu": "{gpu}（计算能力 {cc}），torch {torch}，CUDA {cuda}，{date}",
        "bench_spread": "{median}（四分位距 {q1}–{q3}）",
        "reported": "其他来源报告的数字",
        "reported_line": "“{figure}”，硬件：{hardware}；来源：{source}",
        "bench_hw_not_stated": "未注明",
        "bench_code": "基准测试代码",
        "workload": "负载",
        "bench_setup": "setup（只运行一次）",
        "bench_timed_before": "改进前（计时）",
        "bench_timed_after": "改进后（计时）",
        "bench_memory_code": "测量的字节数",
        "bench_worse_title": "在 {device} 上反而更差",
        "bench_worse_body": "在 {env} 上，改进后的写法实测为 {result}：这条技巧的说法在这里不成立。",
        "bench_same_title": "在 {device} 上没有可测出的收益",
        "bench_same_body": "在 {env} 上，实测结果为 {result}。收益可能需要别的硬件"
        "（见上文“硬件”）或更大的负载才能体现。",
        "benchmarks_title": "基准测试",
        "benchmarks_intro": "本知识库会实测自己的说法：每条关于速度或内存的技巧都给出一个小负载，"
        "由 `python -m generator bench` 分别测量改进前后的写法。下面的数字全部来自提交到仓库的"
        "结果文件，没有一个是手工填写的；公开发表的数字作为“其他来源报告”列在旁边，并注明硬件和来源。",
        "method": "测量方法",
        "method_text": "每种写法的语句都用 `torch.utils.benchmark.Timer` 计时（`blocked_autorange`："
        "先预热，再选择足够大的块使计时开销可以忽略，在 CUDA 上每块前后同步），线程数固定，"
        "两种写法交替重复测量（前、后、后、前……），让机器的缓慢漂移对两者影响相同。比值取各次重复中"
        "“改进前 ÷ 改进后”的中位数（大于 1 表示改进后更快）；区间是各次比值的范围，"
        "无论噪声分布如何，n 次重复的区间覆盖真实中位数的概率为 1 − 2^(1−n)。"
        "整个区间高于 1 + {tol} 判为*更快*，整个区间低于 1 ÷ (1 + {tol}) 判为*更慢*，"
        "否则判为*无显著差异*。内存数字是该技巧所涉及张量的精确字节数（优化器状态、为反向传播保存的"
        "激活值等），在 CUDA 上还包括 `torch.cuda.max_memory_allocated()` 的增量。",
        "reproduce": "复现",
        "bench_cmd_quick": "约一分钟测完所有能在 CPU 上测量的技巧",
        "bench_cmd_one": "重新测量一条技巧并合并进结果文件（设置须相同）",
        "bench_cmd_cuda": "在有 CUDA GPU 的机器上运行：写入 benchmarks/results/cuda.json",
        "bench_cmd_out": "完整计时（7 次重复，每次 0.25 秒），写入另一个文件",
        "settings_line": "每种写法重复 {replicates} 次，每次计时 {run} 秒{quick}；"
        "区间覆盖中位数的概率为 {cov}。",
        "quick": "（`--quick`）",
        "chart_title": "改进后写法在 {device} 上的加速比",
        "chart_axis": "改进后写法的加速比（改进前 ÷ 改进后，对数坐标；须线：区间）",
        "memory_chart_title": "{device} 上改进前 ÷ 改进后的内存",
        "memory_chart_axis": "改进前 ÷ 改进后的字节数（对数坐标）",
        "time_results": "耗时",
        "reported_short": "其他来源的数字",
        "time_cost": "耗时",
        "memory_results": "内存",
        "kind": "说法",
        "kind_time": "速度",
        "kind_memory": "内存",
        "not_held": "在这里不成立的说法",
        "not_held_intro": "改进后的写法在该设备上没有可测出的改善的技巧。负面结果照样保留，不做隐藏。",
        "not_held_none": "所有实测的说法在该设备上都成立。",
        "not_measurable_title": "无法在 {device} 上测量",
        "device_not_yet": "尚未在 {device} 上测量：还没有来自这类机器的结果文件。"
        "请在这样的机器上运行 `python -m generator bench --device {key}`，"
        "并提交 `benchmarks/results/{key}.json`。",
        "bench_compose_title": "生成脚本的开销",
        "bench_compose_intro": "`python -m generator compose` 生成的训练脚本与手写的最简训练循环"
        "在同一模型和数据上的对比。",
        "bench_compose_not_yet": "尚未测量：`benchmarks/results/compose-overhead-cpu.json` 不存在。"
        "运行 `python benchmarks/compose_overhead.py` 生成该文件。",
        "quantity": "指标",
        "value": "数值",
        "bench_compose_env": "{where}，{cores} 核，{threads} 个线程，torch {torch}，{date}",
        "bench_compose_generated": "生成的 train.py",
        "bench_compose_minimal": "手写的最简训练循环",
        "bench_compose_estimator": "度量方式",
        "bench_compose_ratio": "生成脚本 ÷ 最简循环",
        "bench_compose_overhead": "生成脚本的开销",
        "bench_compose_target": "目标",
        "bench_compose_within": "不超过 {target} %：达到",
        "bench_compose_above": "不超过 {target} %：未达到",
        "bench_compose_median": "各对运行比值的中位数",
        "bench_compose_pairs": "各对运行比值的范围",
    },
}

DEVICE_NAMES = {"cpu": {"en": "CPU", "zh": "CPU"}, "cuda": {"en": "CUDA", "zh": "CUDA"}}


# --- number formats ------------------------------------------------------------------------


def fmt_seconds(s: float) -> str:
    """A duration with a readable unit: ``356 ms``, ``12.3 µs``, ``1.20 s``."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= scale or unit == "ns":
            v = s / scale
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    raise AssertionError  # pragma: no cover


def fmt_bytes(n: int) -> str:
    """A byte count in binary units: ``0 B``, ``512 B``, ``1.5 KiB``, ``24.0 MiB``."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError  # pragma: no cover


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


# --- texts ---------------------------------------------------------------------------------


def env_text(env: Environment, device: str, L: Mapping[str, str]) -> str:  # noqa: N803
    """Where a results file was measured, in one line."""
    if device == "cuda":
        return L["bench_env_gpu"].format(
            gpu=env.gpu_name,
            cc=env.gpu_compute_capability,
            torch=env.torch,
            cuda=env.cuda,
            date=env.date[:10],
        )
    return L["bench_env_cpu"].format(
        cores=env.cpu_cores,
        arch=env.cpu_arch,
        model=env.cpu_model,
        isa=f", {env.cpu_capability}" if env.cpu_capability else "",
        threads=env.num_threads,
        torch=env.torch,
        date=env.date[:10],
    )


def time_text(ratio: float, low: float, high: float, verdict: str, L: Mapping[str, str]) -> str:  # noqa: N803
    """``1.84× faster (1.69–1.98)``; a slow-down is shown as its own factor, above 1."""
    if verdict == "faster":
        return L["bench_faster"].format(
            ratio=fmt_ratio(ratio), low=fmt_ratio(low), high=fmt_ratio(high)
        )
    if verdict == "slower":
        return L["bench_slower"].format(
            ratio=fmt_ratio(1 / ratio), low=fmt_ratio(1 / high), high=fmt_ratio(1 / low)
        )
    return L["bench_same"].format(low=fmt_ratio(low), high=fmt_ratio(high))


def memory_text(ratio: float | None, verdict: str, what: str, L: Mapping[str, str]) -> str:  # noqa: N803
    """``2.00× less memory (what the bytes are)``."""
    if verdict == "less-memory":
        if ratio is None:
            return L["bench_less_all"].format(what=what)
        return L["bench_less"].format(ratio=fmt_ratio(ratio), what=what)
    if verdict == "more-memory":
        return L["bench_more"].format(ratio=fmt_ratio(1 / ratio if ratio else 1.0), what=what)
    return L["bench_mem_same"].format(what=what)


def _spread(median: float, q1: float, q3: float, L: Mapping[str, str]) -> str:  # noqa: N803
    return L["bench_spread"].format(
        median=fmt_seconds(median), q1=fmt_seconds(q1), q3=fmt_seconds(q3)
    )


# --- tip page ------------------------------------------------------------------------------


@dataclass
class Row:
    """One line of a tip's "Measured" table."""

    device: str
    result: str
    before: str = ""
    after: str = ""
    env: str = ""
    verdict: str | None = None


@dataclass
class Note:
    """An admonition under the table (a negative or null result)."""

    kind: str  # warning | info
    title: str
    body: str


@dataclass
class TipView:
    """Everything the "Measured" section of one tip page shows, in one language."""

    rows: list[Row]
    message: str | None = None
    notes: list[Note] = field(default_factory=list)
    reported: list[str] = field(default_factory=list)
    workload: str | None = None
    code: list[tuple[str, str]] = field(default_factory=list)  # (title, python)


def _result_rows(
    tip: Tip,
    res: TipResult,
    device: str,
    env: str,
    L: Mapping[str, str],
    lang: str,  # noqa: N803
) -> list[Row]:
    assert tip.bench is not None
    name = DEVICE_NAMES[device][lang]
    if res.error:
        return [Row(name, _cell(L["bench_failed"].format(error=res.error)), env=env)]
    stale = "" if res.code == code_hash(tip) else " " + L["bench_stale"].format(id=tip.id)
    rows = []
    if res.time is not None:
        t = res.time
        text = time_text(t.ratio, t.low, t.high, t.verdict, L)
        if tip.bench.kind == "memory":
            text = L["bench_time_of_memory"].format(result=text)
        rows.append(
            Row(
                name,
                text + stale,
                _spread(t.before.median_s, t.before.q1_s, t.before.q3_s, L),
                _spread(t.after.median_s, t.after.q1_s, t.after.q3_s, L),
                env,
                t.verdict,
            )
        )
    if res.memory is not None and tip.bench.memory is not None:
        m = res.memory
        what = _cell(tip.bench.memory.what.get(lang))
        before, after = fmt_bytes(m.before_bytes), fmt_bytes(m.after_bytes)
        row = Row(
            name, memory_text(m.ratio, m.verdict, what, L) + stale, before, after, env, m.verdict
        )
        if tip.bench.kind == "memory":
            rows.insert(0, row)
        else:
            rows.append(row)
    return rows


def _source_md(source: Any, seeds: Mapping[str, str], L: Mapping[str, str]) -> str:  # noqa: N803
    if source.seed:
        return f"{L['seed']} `{seeds[source.seed]}`"
    return f"[{source.title}]({source.url})"


def tip_view(
    tip: Tip,
    results: Mapping[str, ResultsFile],
    lang: str,
    L: Mapping[str, str],  # noqa: N803
    seeds: Mapping[str, str],
) -> TipView | None:
    """The "Measured" section of ``tip``; ``None`` when the tip makes no speed/memory claim."""
    bench = tip.bench
    if bench is None:
        if not {"speed", "memory"} & set(tip.impact):
            return None
        return TipView(rows=[], message=L["bench_no_bench"])
    rows: list[Row] = []
    notes: list[Note] = []
    for device in ("cpu", "cuda"):
        name = DEVICE_NAMES[device][lang]
        if device not in bench.measured_devices():
            assert bench.not_measurable is not None
            reason = _cell(bench.not_measurable.reason.get(lang))
            text = L["bench_not_measurable"].format(device=name, reason=reason)
            rows.append(Row(name, text))
            continue
        file = results.get(device)
        res = file.results.get(tip.id or "") if file else None
        if file is None or res is None:
            rows.append(Row(name, L["bench_not_yet"].format(device=name)))
            continue
        env = env_text(file.environment, device, L)
        device_rows = _result_rows(tip, res, device, env, L, lang)
        rows += device_rows
        if device_rows and device_rows[0].verdict is not None:
            verdict, result = device_rows[0].verdict, device_rows[0].result
            if verdict in BAD:
                notes.append(
                    Note(
                        "warning",
                        L["bench_worse_title"].format(device=name),
                        L["bench_worse_body"].format(env=env, result=result),
                    )
                )
            elif verdict not in GOOD:
                notes.append(
                    Note(
                        "info",
                        L["bench_same_title"].format(device=name),
                        L["bench_same_body"].format(env=env, result=result),
                    )
                )
    reported = [
        L["reported_line"].format(
            figure=r.figure.get(lang),
            hardware=r.hardware or L["bench_hw_not_stated"],
            source=_source_md(r.source, seeds, L),
        )
        for r in bench.reported
    ]
    code: list[tuple[str, str]] = []
    if bench.setup:
        code.append((L["bench_setup"], bench.setup))
    if bench.before and bench.after:
        code += [(L["bench_timed_before"], bench.before), (L["bench_timed_after"], bench.after)]
    if bench.memory is not None:
        mem = f"before_bytes = {bench.memory.before.strip()}\nafter_bytes = {bench.memory.after.strip()}\n"
        code.append((L["bench_memory_code"], mem))
    workload = bench.workload.get(lang) if bench.workload else None
    return TipView(rows=rows, notes=notes, reported=reported, workload=workload, code=code)


# --- summary page --------------------------------------------------------------------------


@dataclass
class SummaryRow:
    """One tip in a summary table."""

    tip: Tip
    result: str
    before: str
    after: str
    verdict: str
    extra: str = ""  # reported figures (time table) or the time cost (memory table)


@dataclass
class DeviceSummary:
    """One device's section of the summary page."""

    key: str
    name: str
    env: str | None = None
    settings: str | None = None
    chart: str | None = None
    memory_chart: str | None = None
    time_rows: list[SummaryRow] = field(default_factory=list)
    memory_rows: list[SummaryRow] = field(default_factory=list)
    not_held: list[SummaryRow] = field(default_factory=list)
    failed: list[tuple[Tip, str]] = field(default_factory=list)
    not_measurable: list[tuple[Tip, str]] = field(default_factory=list)


def device_summary(
    device: str,
    tips: Sequence[Tip],
    file: ResultsFile | None,
    lang: str,
    L: Mapping[str, str],  # noqa: N803
) -> DeviceSummary:
    """The summary of one device: chart, tables, claims that did not hold, not measurable."""
    name = DEVICE_NAMES[device][lang]
    out = DeviceSummary(key=device, name=name)
    for tip in tips:
        if tip.bench is not None and device not in tip.bench.measured_devices():
            assert tip.bench.not_measurable is not None
            out.not_measurable.append((tip, _cell(tip.bench.not_measurable.reason.get(lang))))
    if file is None:
        return out
    out.env = env_text(file.environment, device, L)
    s = file.settings
    out.settings = L["settings_line"].format(
        replicates=s.replicates,
        run=f"{s.min_run_time_s:g}",
        quick=L["quick"] if s.quick else "",
        cov=f"{coverage(s.replicates):.0%}",
    )
    bars, mem_bars = [], []
    for tip in tips:
        res = file.results.get(tip.id or "")
        if tip.bench is None or res is None:
            continue
        if res.error:
            out.failed.append((tip, _cell(res.error)))
            continue
        href = f"../tips/{tip.id}/"
        t = res.time
        time_result = time_text(t.ratio, t.low, t.high, t.verdict, L) if t else ""
        if t is not None and tip.bench.kind == "time":
            reported = "<br>".join(
                _cell(f"{r.figure.get(lang)} ({r.hardware or L['bench_hw_not_stated']})")
                for r in tip.bench.reported
            )
            row = SummaryRow(
                tip,
                time_result,
                fmt_seconds(t.before.median_s),
                fmt_seconds(t.after.median_s),
                t.verdict,
                reported,
            )
            out.time_rows.append(row)
            bars.append(Bar(tip.id or "", t.ratio, t.low, t.high, t.verdict, href))
            if t.verdict not in GOOD:
                out.not_held.append(row)
        if res.memory is not None and tip.bench.memory is not None:
            m = res.memory
            what = _cell(tip.bench.memory.what.get(lang))
            row = SummaryRow(
                tip,
                memory_text(m.ratio, m.verdict, what, L),
                fmt_bytes(m.before_bytes),
                fmt_bytes(m.after_bytes),
                m.verdict,
                time_result if tip.bench.kind == "memory" else "",
            )
            out.memory_rows.append(row)
            if m.ratio is not None and m.ratio > 0:
                mem_bars.append(Bar(tip.id or "", m.ratio, m.ratio, m.ratio, m.verdict, href))
            if tip.bench.kind == "memory" and m.verdict not in GOOD:
                out.not_held.append(row)
    bars.sort(key=lambda b: -b.value)
    mem_bars.sort(key=lambda b: -b.value)
    if bars:
        out.chart = bar_chart(bars, L["chart_title"].format(device=name), L["chart_axis"])
    if mem_bars:
        out.memory_chart = bar_chart(
            mem_bars, L["memory_chart_title"].format(device=name), L["memory_chart_axis"]
        )
    return out


@dataclass
class ComposeView:
    """The composer benchmark on the summary page."""

    env: str
    workload: str
    rows: list[tuple[str, str]]
    command: str


def compose_overhead(
    lang: str,
    L: Mapping[str, str],  # noqa: N803
    path: Path = COMPOSE_OVERHEAD,
) -> ComposeView | None:
    """The composer benchmark (``benchmarks/compose_overhead.py``), or ``None`` when that
    file does not exist or lacks the throughputs."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        generated = float(data["generated_samples_per_s"])
        minimal = float(data["minimal_samples_per_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ratio = float(data.get("ratio", generated / minimal))
    overhead = float(data.get("overhead_percent", (1 - ratio) * 100))
    target = data.get("target_overhead_percent")
    where = [str(data.get("cpu", "?"))]
    if data.get("gpu"):
        where.insert(0, str(data["gpu"]))
    env = L["bench_compose_env"].format(
        where=", ".join(where),
        cores=data.get("cores", "?"),
        threads=data.get("torch_threads", data.get("threads", "?")),
        torch=data.get("torch", "?"),
        date=str(data.get("date", "?"))[:10],
    )
    rows = [
        (L["bench_compose_generated"], f"{generated:g} samples/s"),
        (L["bench_compose_minimal"], f"{minimal:g} samples/s"),
    ]
    estimator = data.get("measure") or data.get("estimator")
    if estimator:
        rows.append((L["bench_compose_estimator"], str(estimator)))
    rows += [
        (L["bench_compose_ratio"], f"{ratio:.3f}"),
        (L["bench_compose_overhead"], f"{overhead:.1f} %"),
    ]
    if target is not None:
        verdict = "bench_compose_within" if overhead <= float(target) else "bench_compose_above"
        rows.append((L["bench_compose_target"], L[verdict].format(target=target)))
    median_pair = data.get("median_pair_ratio", data.get("median_ratio"))
    if median_pair is not None:
        rows.append((L["bench_compose_median"], f"{float(median_pair):.3f}"))
    spread = data.get("pair_ratio_range") or data.get("pair_ratios")
    if spread:
        rows.append((L["bench_compose_pairs"], f"{min(spread):.3f}–{max(spread):.3f}"))
    return ComposeView(
        env=_cell(env),
        workload=_cell(str(data.get("workload", ""))),
        rows=[(_cell(a), _cell(b)) for a, b in rows],
        command=str(data.get("command", "python benchmarks/compose_overhead.py")),
    )
