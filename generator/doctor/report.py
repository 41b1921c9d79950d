"""The doctor's report: the JSON contract, and the text a terminal shows.

JSON (``--format json``), one object:

    script, args, device, device_name, outcome, steps (measured), warmup, total_steps,
    step_time_s (median), breakdown {data, forward, backward, optimizer, other: seconds a
    step, their mean}, gpu_idle_s, peak_memory_bytes, memory {capacity_bytes,
    growth_bytes_per_step}, flops_per_step, achieved_flops, mfu, per_step [...],
    dataloaders [...], optimizers [...], findings [{tip, severity, title, evidence, share,
    path, line, static, kind, rule, page}], world_size, ranks [...], error, notes, trace

Findings come measured first, by severity then share (largest first), then the lint's.
"""

from __future__ import annotations

import json
from typing import Any

from generator import paths
from generator.doctor import units
from generator.doctor.model import PHASES, SEVERITIES, Finding, Measurement, Step


def ordered(findings: list[Finding]) -> list[Finding]:
    """Measured findings by severity, then by share (largest first), then static ones."""

    def key(f: Finding) -> tuple[bool, int, float]:
        return (f.static, SEVERITIES.index(f.severity), -(f.share or 0.0))

    return sorted(findings, key=key)


def tip_page(tip: str) -> str:
    """The tip's page: under the site's public address, else relative to the site's root."""
    return f"{paths.site_url()}tips/{tip}/"


def as_dict(
    m: Measurement,
    script: str,
    args: list[str],
    warmup: int,
    static: list[Finding],
    trace: str | None,
) -> dict[str, Any]:
    """The report as the JSON contract's object."""
    findings = []
    for f in ordered(m.findings + static):
        item = f.as_dict()
        item["page"] = tip_page(f.tip)
        findings.append(item)
    per_step = [_step(s) for s in m.steps]
    error = None
    if m.error is not None:
        error = {
            "type": m.error.type,
            "message": m.error.message,
            "path": m.error.path,
            "line": m.error.line,
        }
    return {
        "script": script,
        "args": args,
        "device": m.device,
        "device_name": m.device_name,
        "outcome": m.outcome,
        "steps": len(m.steps),
        "warmup": warmup,
        "total_steps": m.total_steps,
        "step_time_s": _round(m.step_time_s),
        "breakdown": {p: round(v, 6) for p, v in m.breakdown().items()},
        "gpu_idle_s": _round(m.gpu_idle_s),
        "peak_memory_bytes": m.peak_memory_bytes,
        "memory": {
            "capacity_bytes": m.memory_capacity_bytes,
            "growth_bytes_per_step": _round(m.growth_bytes_per_step),
        },
        "flops_per_step": m.flops_per_step,
        "achieved_flops": _round(m.achieved_flops),
        "mfu": _round(m.mfu),
        "per_step": per_step,
        "profiled_steps": [_step(s) for s in m.profiled_steps],
        "dataloaders": m.dataloaders,
        "optimizers": m.optimizers,
        "findings": findings,
        "world_size": m.world_size,
        "ranks": m.ranks,
        "error": error,
        "notes": m.notes,
        "trace": trace,
        "elapsed_s": round(m.elapsed_s, 3),
    }


def _step(s: Step) -> dict[str, Any]:
    return {
        "seconds": round(s.seconds, 6),
        **{p: round(s.phases.get(p, 0.0), 6) for p in PHASES},
        "allocated_bytes": s.allocated,
        "peak_allocated_bytes": s.peak_allocated,
        "reserved_bytes": s.reserved,
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, ensure_ascii=False, indent=2) + "\n"


def _field(L: dict[str, str], key: str, value: str) -> str:
    """``Label: value``, in the labels' language."""
    return L[key] + L["colon"] + value


def to_text(report: dict[str, Any], L: dict[str, str]) -> str:
    """The report for a terminal."""
    lines = [
        L["doctor_text_head"].format(
            script=report["script"],
            device=report["device_name"],
            steps=report["steps"],
            warmup=report["warmup"],
            profiled=len(report["profiled_steps"]),
        )
    ]
    if report["outcome"] in ("finished", "exited"):
        lines.append(L["doctor_text_ended"].format(steps=report["total_steps"]))
    elif report["outcome"] == "raised":
        lines.append(L["doctor_text_raised"].format(steps=report["total_steps"]))
    step = report["step_time_s"]
    if step is not None:
        mean = sum(report["breakdown"].values()) or 1.0
        phases = " | ".join(
            f"{L['doctor_phase_' + p]} {units.seconds(v)}"
            + L["doctor_aside"].format(text=units.share(v / mean))
            for p, v in report["breakdown"].items()
        )
        times = L["doctor_median_mean"].format(median=units.seconds(step), mean=units.seconds(mean))
        lines.append(_field(L, "doctor_step_time", times))
        lines.append(_field(L, "doctor_mean_step", phases))
    if report["gpu_idle_s"] is not None:
        lines.append(_field(L, "doctor_gpu_idle", units.seconds(report["gpu_idle_s"])))
    if report["peak_memory_bytes"] is not None:
        growth = report["memory"]["growth_bytes_per_step"]
        text = units.size(report["peak_memory_bytes"])
        if growth:
            text += "  " + L["doctor_growth"].format(size=units.size(growth))
        lines.append(_field(L, "doctor_peak_memory", text))
    if report["achieved_flops"]:
        rate = L["doctor_flops_rate"].format(
            rate=units.flops(report["achieved_flops"]), flops=units.flops(report["flops_per_step"])
        )
        if report["mfu"] is not None:
            rate += f", MFU {units.share(report['mfu'])}"
        lines.append(_field(L, "doctor_flops", rate))
    for rank in report["ranks"] if len(report["ranks"]) > 1 else []:
        lines.append(
            L["doctor_rank_line"].format(
                rank=rank["rank"],
                step=units.seconds(rank["step_time_s"] or 0.0),
                data=units.seconds(rank["breakdown"].get("data", 0.0)),
            )
        )
    lines += [_field(L, "doctor_note", n) for n in report["notes"]]
    measured = [f for f in report["findings"] if not f["static"]]
    static = [f for f in report["findings"] if f["static"]]
    lines += ["", L["doctor_measured_findings"] if measured else L["doctor_no_findings"]]
    for i, f in enumerate(measured, 1):
        where = f"{f['path']}:{f['line']}  " if f["path"] else ""
        severity = L["lint_severity_" + f["severity"]]
        lines.append(f"{i:>2}. {severity:<8} {units.share(f['share']):>5}  {f['title']}")
        lines.append(f"    {where}{f['evidence']}")
        lines.append("    " + _field(L, "doctor_fix", f"pytorch-tips show {f['tip']}"))
    if static:
        lines += ["", L["doctor_static_findings"]]
        for f in static:
            tag = L["doctor_tag"].format(text=L["lint_severity_" + f["severity"]])
            show = L["doctor_aside"].format(text=f"pytorch-tips show {f['tip']}")
            lines.append(f"    {f['path']}:{f['line']}: {f['rule']} {tag} {f['evidence']}{show}")
    if report["trace"]:
        lines += ["", _field(L, "doctor_trace", report["trace"])]
    return "\n".join(lines) + "\n"
