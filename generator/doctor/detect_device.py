"""Device-level findings: FLOP/s and MFU, matmul precision, convolution settings, GPU idle
time, pageable copies, communication overlap, and the CUDA caching allocator's memory.

All but the FLOP/s (and the communication overlap, which needs several ranks) are measured
on CUDA only: on a CPU there is no GPU to idle, no TF32, no pinned memory.
"""

from __future__ import annotations

from typing import Any

from generator.compose.peaks import peak_tflops
from generator.doctor import units
from generator.doctor.detect import REPORTED, WARNING, Evidence, finding
from generator.doctor.intervals import overlap, union
from generator.doctor.model import Finding

#: Reserved-but-unallocated memory worth a finding: this share of the reserved, and 1 GiB.
FRAGMENTED, FRAGMENTED_BYTES = 0.25, 2**30
#: Peak reserved memory from which the headroom is too small.
HEADROOM = 0.90


def device(ev: Evidence) -> list[Finding]:
    """Every device-level finding of ``ev``."""
    out = _flops(ev)
    if ev.facts is not None and ev.m.device == "cuda":
        out += _precision(ev) + _convolutions(ev) + _gpu_time(ev) + _allocator(ev)
    if ev.facts is not None and ev.m.world_size > 1:
        out += _comms(ev)
    return out


def precision_of(ev: Evidence) -> str:
    """The precision the matmuls mostly ran in, for the peak FLOP/s: bf16, tf32 or fp32."""
    facts = ev.facts
    if facts is not None and facts.half_matmuls > facts.fp32_matmuls:
        return "bf16"
    if facts is not None and facts.fp32_matmuls and not facts.fp32_matmuls_no_tf32:
        return "tf32"
    return "fp32"


def _flops(ev: Evidence) -> list[Finding]:
    facts = ev.facts
    if facts is None or not ev.profiled or not facts.flops or not ev.step:
        return []
    total = facts.flops
    if facts.conv_backward:  # the profiler counts convolutions forward only
        total += 2 * facts.conv_forward_flops
    per_step = total / ev.profiled
    achieved = per_step / ev.step
    ev.m.flops_per_step, ev.m.achieved_flops = per_step, achieved
    precision = precision_of(ev)
    peak = peak_tflops(ev.m.device_name, precision) if ev.m.device == "cuda" else None
    if not peak:  # FLOP/s alone are in the report's figures, not a finding
        return []
    ev.m.mfu = achieved / (peak * 1e12)
    mfu = ev.L["doctor_mfu_known"].format(
        mfu=units.share(ev.m.mfu), device=ev.m.device_name, peak=peak, precision=precision
    )
    return [
        finding(
            ev,
            "mfu",
            None,
            level="info",
            rate=units.flops(achieved),
            flops=units.flops(per_step),
            mfu=mfu,
        )
    ]


def _precision(ev: Evidence) -> list[Finding]:
    facts, steps, out = ev.facts, ev.profiled, []
    assert facts is not None
    if facts.fp32_matmuls_no_tf32 and ev.settings.get("tf32_capable"):  # Ampere or newer
        out.append(
            finding(
                ev,
                "tf32_off",
                None,
                level="warning",
                count=units.count(facts.fp32_matmuls_no_tf32 / steps),
            )
        )
    total = facts.fp32_matmuls + facts.half_matmuls
    if facts.fp32_matmuls and facts.fp32_matmuls > facts.half_matmuls:
        out.append(
            finding(
                ev,
                "fp32_matmul",
                None,
                level="info",
                fp32=units.count(facts.fp32_matmuls / steps),
                total=units.count(total / steps),
            )
        )
    return out


def _convolutions(ev: Evidence) -> list[Finding]:
    facts, steps, out = ev.facts, ev.profiled, []
    assert facts is not None
    if facts.conv_ops and not ev.settings.get("cudnn_benchmark", True):
        out.append(
            finding(
                ev,
                "cudnn_benchmark",
                None,
                level="info",
                count=units.count(facts.conv_ops / steps),
            )
        )
    if facts.conv_nchw_half:
        out.append(
            finding(
                ev,
                "channels_last",
                None,
                level="info",
                count=units.count(facts.conv_nchw_half / steps),
                total=units.count(facts.conv_ops / steps),
            )
        )
    return out


def _window(ev: Evidence) -> tuple[int, int]:
    assert ev.facts is not None
    return ev.facts.marks[0], ev.facts.marks[-1]


def _gpu_time(ev: Evidence) -> list[Finding]:
    facts, out = ev.facts, []
    assert facts is not None
    if not ev.profiled or not facts.gpu_busy or not ev.step:
        return []
    lo, hi = _window(ev)
    # The GPU's busy time a step (under the profiler, which slows the host, not the
    # kernels), against a step timed without it.
    busy = union(facts.gpu_busy, lo, hi) / 1e9 / ev.profiled
    idle = max(0.0, ev.step - busy)
    ev.m.gpu_idle_s = idle
    share = idle / ev.step
    if share >= WARNING:
        out.append(
            finding(
                ev,
                "gpu_idle",
                share,
                idle=units.seconds(idle),
                step=units.seconds(ev.step),
                share=units.share(share),
                data=units.share(ev.share(ev.m.breakdown()["data"])),
            )
        )
    if facts.pageable:
        seconds = sum(ns for ns, _ in facts.pageable) / 1e9 / ev.profiled
        copies = ev.share(seconds)
        loader: dict[str, Any] = ev.rec.loaders[0] if ev.rec.loaders else {}
        out.append(
            finding(
                ev,
                "pageable_copy",
                copies,
                (loader.get("path"), loader.get("line")),
                count=units.count(len(facts.pageable) / ev.profiled),
                time=units.seconds(seconds),
                share=units.share(copies),
            )
        )
    return out


def _comms(ev: Evidence) -> list[Finding]:
    """Communication time a step and the part of it no computation hides (CUDA: NCCL
    kernels against the other kernels; CPU: gloo's collectives, which the step waits for)."""
    facts = ev.facts
    assert facts is not None
    if not ev.profiled:
        return []
    if facts.nccl:
        comm = union(facts.nccl, *_window(ev))
        exposed = comm - overlap(facts.nccl, facts.compute)
    else:  # gloo's collectives against the ops the main thread runs meanwhile
        comm = union(facts.gloo, *_window(ev))
        exposed = comm - overlap(facts.gloo, facts.host_compute)
    if not comm:
        return []
    comm_s, exposed_s = comm / 1e9 / ev.profiled, exposed / 1e9 / ev.profiled
    share = ev.share(exposed_s)
    if share is None or share < REPORTED:
        return []
    return [
        finding(
            ev,
            "comm_overlap",
            share,
            comm=units.seconds(comm_s),
            exposed=units.seconds(exposed_s),
            share=units.share(share),
        )
    ]


def _allocator(ev: Evidence) -> list[Finding]:
    steps, out = ev.m.steps + ev.m.profiled_steps, []
    reserved = max((s.reserved or 0) for s in steps) if steps else 0
    allocated = max((s.peak_allocated or 0) for s in steps) if steps else 0
    if not reserved:
        return []
    gap = reserved - allocated
    if gap >= FRAGMENTED_BYTES and gap / reserved >= FRAGMENTED:
        out.append(
            finding(
                ev,
                "fragmentation",
                gap / reserved,
                gap=units.size(gap),
                share=units.share(gap / reserved),
                reserved=units.size(reserved),
            )
        )
    capacity = ev.m.memory_capacity_bytes
    if capacity and reserved / capacity >= HEADROOM:
        out.append(
            finding(
                ev,
                "memory_headroom",
                reserved / capacity,
                level="warning",
                reserved=units.size(reserved),
                capacity=units.size(capacity),
                share=units.share(reserved / capacity),
                free=units.size(capacity - reserved),
            )
        )
    return out
