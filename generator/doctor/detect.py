"""From measurements to findings: the time a step loses, compilations, memory that grows.

Each detection reads what the hooks, the profiler and TorchDynamo recorded (`Evidence`) and
reports a `Finding` only when it measured the problem, with the numbers as evidence, its
share of the step time (or of the peak memory) and, where one is known, the user's line.
Severity follows the share: ``error`` from half of the step, ``warning`` from a tenth,
``info`` below (`severity`); growing memory and graph breaks are warnings whatever their
share. The device-level detections are in `generator.doctor.detect_device`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from generator.doctor import units
from generator.doctor.dynamo import CompileRecord
from generator.doctor.hooks import Recorder
from generator.doctor.kinds import KINDS
from generator.doctor.memory import LeakSite
from generator.doctor.model import Finding, Measurement
from generator.doctor.trace import Facts

#: The share of the step from which a time finding is reported at all.
REPORTED = 0.05
WARNING, ERROR = 0.10, 0.50
#: Syncs fewer than this per step (a log line every N steps) are not reported.
SYNCS_PER_STEP = 0.5


@dataclass
class Evidence:
    """What one process measured, as the detections read it."""

    rec: Recorder
    m: Measurement
    L: dict[str, str]
    facts: Facts | None = None
    compiled: CompileRecord | None = None
    window: tuple[float, float] = (0.0, 0.0)  # time.time() at the measured steps' ends
    leaks: list[LeakSite] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def step(self) -> float:
        return self.m.mean_step_s or 0.0

    @property
    def steps(self) -> int:
        """Steps timed without the profiler: the step time and the phases are theirs."""
        return len(self.m.steps)

    @property
    def profiled(self) -> int:
        """Steps under the profiler (between its first and last mark): counts are theirs."""
        return max(len(self.facts.marks) - 1, 0) if self.facts is not None else 0

    def share(self, seconds_per_step: float) -> float | None:
        return seconds_per_step / self.step if self.step > 0 else None


def severity(share: float | None) -> str:
    """``error`` from half of the step, ``warning`` from a tenth, else ``info``."""
    if share is None:
        return "info"
    return "error" if share >= ERROR else "warning" if share >= WARNING else "info"


def finding(
    ev: Evidence,
    kind: str,
    portion: float | None,
    at: tuple[str | None, int | None] = (None, None),
    level: str | None = None,
    **values: Any,
) -> Finding:
    """A finding of ``kind`` accounting for ``portion`` of the step (or of the peak memory):
    its title and evidence from the labels, filled with ``values``."""
    L = ev.L
    return Finding(
        kind=kind,
        tip=KINDS[kind].tip,
        severity=level or severity(portion),
        title=L["doctor_kind_" + kind],
        evidence=L["doctor_ev_" + kind].format(**values),
        share=portion,
        path=at[0],
        line=at[1],
    )


def step_time(ev: Evidence) -> list[Finding]:
    """Data wait, host-device syncs, the optimizer's for-loop, zero-filled gradients."""
    return [*_data(ev), *_syncs(ev), *_optimizer(ev), *_zero_grad(ev)]


def _data(ev: Evidence) -> list[Finding]:
    wait = ev.m.breakdown()["data"]
    share = ev.share(wait)
    if share is None or share < REPORTED or not ev.rec.loaders:
        return []
    loader = ev.rec.loaders[0]
    where = (loader["path"], loader["line"])
    return [
        finding(
            ev,
            "data_wait",
            share,
            where,
            wait=units.seconds(wait),
            step=units.seconds(ev.step),
            share=units.share(share),
            where=_where(ev, where),
            workers=loader["num_workers"],
            pin=loader["pin_memory"],
            persistent=loader["persistent_workers"],
            prefetch=loader["prefetch_factor"],
        )
    ]


def _where(ev: Evidence, where: tuple[str | None, int | None]) -> str:
    return f"{where[0]}:{where[1]}" if where[0] else ev.L["doctor_unknown_line"]


def _syncs(ev: Evidence) -> list[Finding]:
    if ev.facts is None or not ev.profiled:
        return []
    by_line: dict[tuple[str | None, int | None], list[Any]] = {}
    for sync in ev.facts.syncs:
        by_line.setdefault((sync.path, sync.line), []).append(sync)
    cpu = ev.m.device != "cuda"
    out = []
    for where, syncs in by_line.items():
        per_step = len(syncs) / ev.profiled
        if per_step < SYNCS_PER_STEP:
            continue
        seconds = sum(s.ns for s in syncs) / 1e9 / ev.profiled
        share = ev.share(seconds)
        names = Counter(s.name for s in syncs).most_common()
        ops = (
            names[0][0]
            if len(names) == 1
            else ", ".join(  # with their count a step
                f"{n} ×{units.count(c / ev.profiled)}" for n, c in names
            )
        )
        f = finding(
            ev,
            "sync",
            share,
            where,
            level="info" if cpu else None,
            count=units.count(per_step),
            ops=ops,
            time=units.seconds(seconds),
            share=units.share(share),
        )
        if cpu:
            f.evidence += ev.L["doctor_sync_cpu_note"]
        out.append(f)
    return out


def _optimizer(ev: Evidence) -> list[Finding]:
    if ev.facts is None or not ev.steps:
        return []
    seconds = ev.m.breakdown()["optimizer"]
    share = ev.share(seconds)
    if share is None or share < REPORTED:
        return []
    out = []
    for info in ev.rec.optimizers:
        counts = ev.facts.optimizer_ops.get(info["class"])
        if not counts or counts["foreach"] or counts["fused"] or not counts["ops"]:
            continue
        # A for-loop the script asked for is graded by its share; PyTorch's own default
        # (parameters on the CPU) is reported for information.
        level = None
        if info["foreach"] is False:
            why = ev.L["doctor_why_foreach_false"]
        elif info["device"] == "cpu":
            why, level = ev.L["doctor_why_default_cpu"], "info"
        else:
            why = ""
        out.append(
            finding(
                ev,
                "optimizer_loop",
                share,
                (info["path"], info["line"]),
                level=level,
                cls=info["class"],
                tensors=info["tensors"],
                why=why,
                ops=units.count(round(counts["ops"] / max(counts["steps"], 1))),
                time=units.seconds(seconds),
                share=units.share(share),
            )
        )
    return out


def _zero_grad(ev: Evidence) -> list[Finding]:
    out = []
    for entry in ev.rec.zero_grads.values():
        if entry.set_to_none or not entry.calls or not ev.steps:
            continue
        seconds = entry.seconds / ev.steps
        share = ev.share(seconds)
        out.append(
            finding(
                ev,
                "zero_grad_fill",
                share,
                (entry.path, entry.line),
                size=units.size(entry.grad_bytes),
                time=units.seconds(seconds),
                share=units.share(share),
            )
        )
    return out


def compiled(ev: Evidence) -> list[Finding]:
    """Graph breaks and recompilations, with Dynamo's reasons."""
    record = ev.compiled
    if record is None:
        return []
    out = []
    for brk in record.breaks:
        out.append(
            finding(
                ev,
                "graph_break",
                None,
                (brk.path, brk.line),
                level="warning",
                count=brk.count,
                reason=brk.reason,
            )
        )
    by_function: dict[tuple[str, str | None, int | None], list[Any]] = {}
    for rec in record.recompiles:
        by_function.setdefault((rec.function, rec.path, rec.line), []).append(rec)
    lo, hi = ev.window
    for (function, path, line), recs in by_function.items():
        during = sum(r.seconds for r in recs if lo <= r.start <= hi)
        share = during / (hi - lo) if during and hi > lo else None
        out.append(
            finding(
                ev,
                "recompile",
                share,
                (path, line),
                level="warning" if share is None or share < ERROR else "error",
                count=len(recs),
                function=function,
                reason=recs[-1].reason,
                seconds=units.seconds(sum(r.seconds for r in recs)),
                during=units.seconds(during),
            )
        )
    return out


def memory(ev: Evidence) -> list[Finding]:
    """Tensors that outlive their step, every step: a leak, named by line and holder."""
    out = []
    peak = ev.m.peak_memory_bytes or 0
    for site in ev.leaks:
        per_step = site.nbytes / max(site.steps, 1)
        share = site.nbytes / peak if peak else None
        holder = site.holder
        held = ev.L["doctor_held_by"].format(holder=holder) if holder else ""
        where = (site.holder_path, site.holder_line) if site.holder_line else (site.path, site.line)
        kind = "graph_kept" if site.grad_fn else "memory_growth"
        out.append(
            finding(
                ev,
                kind,
                share,
                where,
                level="warning",
                count=site.count,
                where=f"{site.path}:{site.line}",
                per_step=units.size(per_step),
                held=held,
                grad_fn=site.grad_fn or "",
            )
        )
    return out
