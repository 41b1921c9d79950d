"""What the site shows of the benchmark results: the "Measured" section of each tip page
and the summary page ``docs/benchmarks.md``, in English and Chinese.

Every figure shown comes from a results file written by ``python -m generator bench``
(`generator.bench.results`); published figures from the records are shown beside them as
"reported". A device without a results file says "not yet measured", never a number. A tip
measured in two regimes (launch-bound, compute-bound) gets one row per regime, each with the
sizes it was measured at. The texts come from ``generator/templates/site/ui.yaml`` (passed in
as ``L``, see `generator.records.ui`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from generator.bench.chart import BAD, GOOD, UNSURE
from generator.bench.results import ResultsFile, TipResult, code_hash
from generator.bench.texts import (
    cell,
    device_label,
    device_name,
    env_text,
    fmt_bytes,
    fmt_sizes,
    memory_text,
    slower_by_design,
    spread,
    time_text,
)
from generator.records.benchspec import Bench
from generator.records.fields import Source
from generator.records.schema import Tip
from generator.records.taxonomy import DEVICES, Label

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
    sizes: str = ""


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
    regimes: bool = False  # some device was measured in two regimes: explain them
    notes: list[Note] = field(default_factory=list)
    reported: list[str] = field(default_factory=list)
    workload: str | None = None
    code: list[tuple[str, str]] = field(default_factory=list)  # (title, python)


def _result_rows(
    tip: Tip,
    res: TipResult,
    device: str,
    name: str,
    env: str,
    L: Mapping[str, str],
    lang: str,
) -> list[Row]:
    """The rows of one result (one regime); ``name`` labels the device (and regime)."""
    assert tip.bench is not None
    sizes = fmt_sizes(res.sizes)
    if res.error:
        error = cell(L["bench_failed"].format(error=res.error))
        return [Row(name, error, env=env, sizes=sizes)]
    stale = "" if res.code == code_hash(tip, device) else " " + L["bench_stale"].format(id=tip.id)
    rows = []
    if res.time is not None:
        t = res.time
        text = time_text(t.ratio, t.low, t.high, t.verdict, L)
        if tip.bench.kind == "memory":
            if slower_by_design(tip, t.verdict):
                text = L["bench_tradeoff"].format(result=text)
            text = L["bench_time_of_memory"].format(result=text)
        rows.append(
            Row(
                name,
                text + stale,
                spread(t.before.median_s, t.before.q1_s, t.before.q3_s, L),
                spread(t.after.median_s, t.after.q1_s, t.after.q3_s, L),
                env,
                t.verdict,
                sizes,
            )
        )
    if res.memory is not None and tip.bench.memory is not None:
        m = res.memory
        what = cell(tip.bench.memory.what.get(lang))
        before, after = fmt_bytes(m.before_bytes), fmt_bytes(m.after_bytes)
        result = memory_text(m.ratio, m.verdict, what, L) + stale
        row = Row(name, result, before, after, env, m.verdict, sizes)
        if tip.bench.kind == "memory":
            rows.insert(0, row)
        else:
            rows.append(row)
    return rows


def _source_md(source: Source, seeds: Mapping[str, Label], lang: str) -> str:
    if source.seed:
        return seeds[source.seed].get(lang)
    return f"[{source.title}]({source.url})"


def tip_view(
    tip: Tip,
    results: Mapping[str, ResultsFile],
    lang: str,
    L: Mapping[str, str],
    seeds: Mapping[str, Label],
) -> TipView | None:
    """The "Measured" section of ``tip``; ``None`` when the tip makes no speed/memory claim."""
    bench = tip.bench
    if bench is None:
        if not {"speed", "memory"} & set(tip.impact):
            return None
        return TipView(rows=[], message=L["bench_no_bench"])
    view = TipView(rows=[])
    for device in ("cpu", "cuda"):
        _add_device(view, tip, bench, device, results.get(device), lang, L)
    view.reported = [
        L["reported_line"].format(
            figure=r.figure.get(lang),
            hardware=r.hardware_in(lang) or L["bench_hw_not_stated"],
            source=_source_md(r.source, seeds, lang),
        )
        for r in bench.reported
    ]
    view.workload = bench.workload.get(lang) if bench.workload else None
    view.code = _bench_code(bench, L)
    return view


def _add_device(
    view: TipView,
    tip: Tip,
    bench: Bench,
    device: str,
    file: ResultsFile | None,
    lang: str,
    L: Mapping[str, str],
) -> None:
    """The rows of ``device`` (one per regime and kind of result, or why there is none), and
    a note under the table for a claim that did not hold there."""
    name = device_name(device, L)
    measurable = device in bench.measured_devices()
    measured = file.regimes(tip.id or "") if file is not None and measurable else []
    if file is None or not measured:
        view.rows.append(Row(name, _no_result(bench, measurable, name, lang, L)))
        return
    env = env_text(file.environment, device, L)
    for regime, res in measured:
        view.regimes = view.regimes or regime != "default"
        _add_result(view, tip, res, device, device_label(name, regime, L), env, lang, L)


def _add_result(
    view: TipView,
    tip: Tip,
    res: TipResult,
    device: str,
    label: str,
    env: str,
    lang: str,
    L: Mapping[str, str],
) -> None:
    """The rows of one result (one regime), and the note its first row calls for."""
    rows = _result_rows(tip, res, device, label, env, L, lang)
    view.rows += rows
    note = _note(rows[0], label, env, L) if rows else None
    if note is not None:
        view.notes.append(note)


def _no_result(bench: Bench, measurable: bool, name: str, lang: str, L: Mapping[str, str]) -> str:
    """Why a device has no result: the benchmark cannot test the claim there, or it has not
    run there yet."""
    if measurable:
        return L["bench_not_yet"].format(device=name)
    assert bench.not_measurable is not None
    reason = cell(bench.not_measurable.reason.get(lang))
    return L["bench_not_measurable"].format(device=name, reason=reason)


#: The note under the table for a verdict that is not an improvement: (kind, title, body).
_NOTES = (
    (BAD, ("warning", "bench_worse_title", "bench_worse_body")),
    (UNSURE, ("info", "bench_unsure_title", "bench_unsure_body")),
)
_SAME_NOTE = ("info", "bench_same_title", "bench_same_body")


def _note(row: Row, label: str, env: str, L: Mapping[str, str]) -> Note | None:
    """The note a result's first row calls for: a regression, replicates that disagree, or
    no significant difference; none for an improvement or a row without a verdict."""
    if row.verdict is None or row.verdict in GOOD:
        return None
    kind, title, body = next((n for verdicts, n in _NOTES if row.verdict in verdicts), _SAME_NOTE)
    return Note(
        kind,
        L[title].format(device=label),
        L[body].format(env=env, result=row.result),
    )


def _bench_code(bench: Bench, L: Mapping[str, str]) -> list[tuple[str, str]]:
    """The code the benchmark ran, as (title, python): setup, the timed forms, the memory."""
    code: list[tuple[str, str]] = []
    if bench.setup:
        code.append((L["bench_setup"], bench.setup))
    if bench.before and bench.after:
        code += [(L["bench_timed_before"], bench.before), (L["bench_timed_after"], bench.after)]
    if bench.memory is not None:
        mem = (
            f"before_bytes = {bench.memory.before.strip()}\n"
            f"after_bytes = {bench.memory.after.strip()}\n"
        )
        code.append((L["bench_memory_code"], mem))
    return code


def verified(
    tip: Tip, results: Mapping[str, ResultsFile], lang: str, L: Mapping[str, str]
) -> str | None:
    """The "Verified" line near the top of a tip page: per device the tip's code runs on,
    what ran it, from data only.

    ``✓ (torch X, DATE)``: the device's results file holds a current, successful result of
    this tip (its benchmark ran there, with that torch, on that day). ``✓ (test suite)``, on
    CPU only: the snippets and their checks run in every test-suite run. Otherwise ``not
    yet``: nothing recorded a run on that hardware. ``None`` for a tip without code.
    """
    if not tip.variants():
        return None
    parts = []
    for device in tip.hardware.devices:
        name = DEVICES[device].get(lang)
        file = results.get(device)
        measured = file.regimes(tip.id or "") if file else []
        current = (
            file is not None
            and tip.bench is not None
            and bool(measured)
            and all(not r.error and r.code == code_hash(tip, device) for _, r in measured)
        )
        if current:
            assert file is not None
            env = file.environment
            parts.append(
                L["verified_measured"].format(device=name, torch=env.torch, date=env.date[:10])
            )
        elif device == "cpu":
            parts.append(L["verified_suite"].format(device=name))
        else:
            parts.append(L["verified_not_yet"].format(device=name))
    return " · ".join(parts)


# --- summary page --------------------------------------------------------------------------
