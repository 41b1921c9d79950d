"""The kinds of finding the doctor reports, each with the tip that fixes it.

One table, read by the doctor's detections, by ``validate`` (`generator.doctor.tips`: every
tip named here exists) and by the tip pages ("The doctor detects this"). A kind's title and
its evidence sentence are UI labels (``doctor_kind_<kind>``, ``doctor_ev_<kind>`` in
``generator/templates/site/ui.yaml``). Standard library only: the site build imports it.
"""

from __future__ import annotations

from typing import NamedTuple


class Kind(NamedTuple):
    """A kind of finding: the tip whose *after* snippet is the fix, whether the doctor
    measures it on CUDA only, and whether its share is of the step time or of the peak
    memory."""

    tip: str
    cuda_only: bool = False
    memory: bool = False


#: Every finding kind, in the order the doctor's help and page list them.
KINDS: dict[str, Kind] = {
    "data_wait": Kind("dataloader-num-workers"),
    "sync": Kind("avoid-cpu-gpu-syncs"),
    "optimizer_loop": Kind("fused-optimizers"),
    "zero_grad_fill": Kind("zero-grad-set-to-none"),
    "graph_break": Kind("compile-graph-breaks-recompiles"),
    "recompile": Kind("compile-graph-breaks-recompiles"),
    "graph_kept": Kind("detach-summary-statistics", memory=True),
    "memory_growth": Kind("cuda-memory-snapshot", memory=True),
    "fragmentation": Kind("expandable-segments-allocator", cuda_only=True, memory=True),
    "memory_headroom": Kind("find-max-batch-size", cuda_only=True, memory=True),
    "tf32_off": Kind("tf32-matmul", cuda_only=True),
    "fp32_matmul": Kind("autocast-mixed-precision", cuda_only=True),
    "cudnn_benchmark": Kind("cudnn-benchmark", cuda_only=True),
    "channels_last": Kind("channels-last", cuda_only=True),
    "gpu_idle": Kind("cuda-graphs-reduce-overhead", cuda_only=True),
    "pageable_copy": Kind("pin-memory-non-blocking", cuda_only=True),
    "comm_overlap": Kind("ddp-tuning-knobs"),
    "mfu": Kind("measure-mfu"),
}


def kinds_by_tip() -> dict[str, list[str]]:
    """Tip id -> the finding kinds that name it (for the tip pages)."""
    out: dict[str, list[str]] = {}
    for name, kind in KINDS.items():
        out.setdefault(kind.tip, []).append(name)
    return out
