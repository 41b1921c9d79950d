"""The profiler over the measured steps, and one pass over what it recorded.

`Profiler` runs ``torch.profiler.profile`` (CPU activity, and CUDA where present) with
``record_shapes``, ``with_stack``, ``profile_memory`` and ``with_flops``, from the end of the
warm-up to the end of the last measured step, and marks each step's end with a
``doctor::step`` annotation. `scan` walks its event tree once and keeps the facts the
detections need (`Facts`): step boundaries, host-device syncs with the user's line, every
allocation, the optimizers' and convolutions' ops, FLOPs, and on CUDA the GPU's activity.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.doctor.stacks import ancestor_ids, loading_data, place, user_line

MARK = "doctor::step"

#: Ops that copy a value to the host, so wait for the device: .item(), .tolist(), bool(t),
#: float(t), int(t) all end in _local_scalar_dense.
SYNC_OPS = frozenset({"aten::_local_scalar_dense"})
#: Ops whose output size depends on the data: on CUDA they wait for the device.
CUDA_SYNC_OPS = frozenset({"aten::nonzero", "aten::masked_select", "aten::_unique2"})
#: The CUDA runtime's blocking calls.
CUDA_SYNC_CALLS = frozenset(
    {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize"}
)
MATMULS = frozenset({"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"})


@dataclass
class Sync:
    """One host-device sync: the op or call, the user's line that led to it, its time."""

    name: str
    path: str | None
    line: int | None
    ns: int


@dataclass
class Alloc:
    """One allocation (``size`` > 0) or free (``size`` < 0) of the profiled window."""

    t: int
    ptr: int
    size: int
    total: int
    reserved: int
    device: str
    event: Any


@dataclass
class Facts:
    """What one profiled window holds, as the detections read it."""

    marks: list[int] = field(default_factory=list)
    syncs: list[Sync] = field(default_factory=list)
    allocs: list[Alloc] = field(default_factory=list)
    optimizer_ops: dict[str, dict[str, int]] = field(default_factory=dict)
    optimizer_spans: list[tuple[int, int, int, str]] = field(default_factory=list)
    top_ops: list[tuple[int, int, int, str]] = field(default_factory=list)
    sync_spans: list[tuple[int, int, int]] = field(default_factory=list)  # (tid, start, end)
    main_tid: int = 0
    gloo: list[tuple[int, int]] = field(default_factory=list)
    host_compute: list[tuple[int, int]] = field(default_factory=list)
    flops: int = 0
    conv_forward_flops: int = 0
    conv_backward: bool = False
    conv_ops: int = 0
    conv_nchw_half: int = 0
    fp32_matmuls: int = 0
    fp32_matmuls_no_tf32: int = 0
    half_matmuls: int = 0
    gpu_busy: list[tuple[int, int]] = field(default_factory=list)
    gpu_kernels_ns: int = 0
    nccl: list[tuple[int, int]] = field(default_factory=list)
    compute: list[tuple[int, int]] = field(default_factory=list)
    pageable: list[tuple[int, str]] = field(default_factory=list)


class Profiler:
    """``torch.profiler.profile`` over the measured steps."""

    def __init__(self, cuda: bool) -> None:
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU]
        if cuda:
            activities.append(ProfilerActivity.CUDA)
        self.prof = profile(
            activities=activities,
            record_shapes=True,
            with_stack=True,
            profile_memory=True,
            with_flops=True,
        )
        self.running = False

    def start(self) -> None:
        import torch

        # Freeing a CPU block allocated before the profiler started logs a warning on
        # descriptor 2 ("Memory block of unknown size..."), the first time in the process and
        # then once every 1000 times: one such block is freed here, where it goes nowhere.
        before = torch.empty(1)
        with quiet_stderr():  # Kineto prints a line as it starts and stops
            self.prof.start()
            del before
        self.running = True

    @staticmethod
    def mark() -> None:
        """Annotate the end of a step."""
        from torch.profiler import record_function

        with record_function(MARK):
            pass

    def stop(self) -> None:
        if self.running:
            self.running = False
            with quiet_stderr():
                self.prof.stop()

    def export(self, folder: Path, rank: int) -> Path:
        """Write the Chrome/Perfetto trace into ``folder``; its path."""
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"doctor-trace-rank{rank}.json"
        tmp = path.with_name(path.name + ".tmp")
        self.prof.export_chrome_trace(str(tmp))
        tmp.replace(path)
        return path

    def facts(self) -> Facts:
        return scan(self.prof)


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Send this process's file descriptor 2 to /dev/null for the duration (native code's
    messages; Python's sys.stderr is flushed first)."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _device(meta: Any) -> str | None:
    try:
        return str(meta.device.type)
    except AttributeError:
        return None


def _inputs(event: Any) -> list[Any]:
    try:
        return list(event.extra_fields.inputs)
    except (AttributeError, RuntimeError):
        return []


def scan(prof: Any) -> Facts:
    """Walk the profiler's event tree twice (the step marks, then the events between the
    first and the last mark) and its device activity once."""
    from torch._C._profiler import _EventType
    from torch.profiler._utils import traverse_dfs

    facts = Facts()
    results = prof.profiler.kineto_results
    tree = results.experimental_event_tree()
    marks = [e for e in traverse_dfs(tree) if e.tag == _EventType.TorchOp and e.name == MARK]
    facts.marks = sorted(e.start_time_ns for e in marks)
    if len(facts.marks) < 2:
        return facts
    facts.main_tid = marks[0].start_tid
    lo, hi = facts.marks[0], facts.marks[-1]
    synced: set[int] = set()  # ops counted as syncs: their runtime calls are not counted again
    unplaced: list[tuple[Sync, int, int]] = []  # runtime calls with no Python parent
    in_tree = False  # whether the event tree holds the CUDA runtime's calls
    for event in traverse_dfs(tree):
        tag = event.tag
        if tag == _EventType.Allocation:  # all of them: the running totals start before
            f = event.extra_fields
            facts.allocs.append(
                Alloc(
                    event.start_time_ns,
                    f.ptr,
                    f.alloc_size,
                    f.total_allocated,
                    f.total_reserved,
                    str(f.device.type),
                    event,
                )
            )
            continue
        if not lo <= event.start_time_ns <= hi:
            continue
        name = event.name
        if tag == _EventType.TorchOp:
            _torch_op(facts, event, name, synced)
        elif tag == _EventType.Kineto and name in CUDA_SYNC_CALLS:
            in_tree = True
            if not any(a in synced for a in ancestor_ids(event)):
                path, line = user_line(event) or (None, None)
                sync = Sync(name, path, line, event.duration_time_ns)
                facts.syncs.append(sync)
                if path is None:
                    unplaced.append((sync, event.start_tid, event.start_time_ns))
    facts.allocs.sort(key=lambda a: a.t)
    _optimizer_ops(facts)
    calls = _flops_and_device(facts, results, lo, hi)
    if not in_tree:  # the runtime calls from the device activity, placed by their time
        for name, tid, start, ns in calls:
            if not any(t == tid and a <= start <= b for t, a, b in facts.sync_spans):
                sync = Sync(name, None, None, ns)
                facts.syncs.append(sync)
                unplaced.append((sync, tid, start))
    if unplaced:
        place(tree, unplaced)
    return facts


def _torch_op(facts: Facts, event: Any, name: str, synced: set[int]) -> None:
    if name == MARK:
        return
    if name in SYNC_OPS or name in CUDA_SYNC_OPS:
        devices = {_device(i) for i in _inputs(event) if hasattr(i, "sizes")}
        on_cuda = "cuda" in devices
        if name in CUDA_SYNC_OPS and not on_cuda:
            return
        # On the CPU nothing waits; count the calls the user's own training code makes:
        # not torch's internals (the for-loop Adam's step counter), nor a dataset's, whose
        # tensors stay on the CPU whatever the model's device.
        where = user_line(event, nearest_only=not on_cuda)
        if not on_cuda and (where is None or loading_data(event)):
            return
        synced.add(event.id)
        facts.sync_spans.append((event.start_tid, event.start_time_ns, event.end_time_ns))
        path, line = where or (None, None)
        facts.syncs.append(Sync(name, path, line, event.duration_time_ns))
    elif name.startswith("Optimizer.step#"):
        cls = name.split("#", 1)[1].split(".")[0]
        facts.optimizer_spans.append((event.start_time_ns, event.end_time_ns, event.start_tid, cls))
    elif name.startswith("aten::") and not _under_op(event):
        facts.top_ops.append((event.start_time_ns, event.end_time_ns, event.start_tid, name))
    elif name.startswith("gloo:"):  # a collective, on gloo's own thread
        facts.gloo.append((event.start_time_ns, event.end_time_ns))
    if name == "aten::convolution_backward":
        facts.conv_backward = True
    elif name == "aten::convolution":
        inputs = _inputs(event)
        facts.conv_ops += 1
        if inputs and hasattr(inputs[0], "sizes") and _device(inputs[0]) == "cuda":
            x = inputs[0]
            half = str(x.dtype) in ("torch.float16", "torch.bfloat16")
            if half and _is_nchw(list(x.sizes), list(x.strides)):
                facts.conv_nchw_half += 1
    elif name in MATMULS:
        inputs = [i for i in _inputs(event) if hasattr(i, "sizes")]
        if inputs and _device(inputs[0]) == "cuda":
            dtype = str(inputs[0].dtype)
            if dtype == "torch.float32":
                facts.fp32_matmuls += 1
                if not event.extra_fields.allow_tf32_cublas:
                    facts.fp32_matmuls_no_tf32 += 1
            elif dtype in ("torch.float16", "torch.bfloat16"):
                facts.half_matmuls += 1


def _under_op(event: Any) -> bool:
    from torch._C._profiler import _EventType

    parent = event.parent
    return parent is not None and parent.tag == _EventType.TorchOp and parent.name != MARK


def _optimizer_ops(facts: Facts) -> None:
    """Count the top-level ops inside each optimizer's step(), by class: their names tell
    the implementation (``_foreach_*``, ``_fused_*`` or per-tensor ops)."""
    spans = sorted(facts.optimizer_spans)
    starts = [s[0] for s in spans]
    for cls in {s[3] for s in spans}:
        facts.optimizer_ops[cls] = {
            "steps": sum(1 for s in spans if s[3] == cls),
            "foreach": 0,
            "fused": 0,
            "ops": 0,
        }
    for start, end, tid, name in facts.top_ops:
        if tid == facts.main_tid:
            facts.host_compute.append((start, end))
        i = bisect.bisect_right(starts, start) - 1
        if i < 0 or start > spans[i][1] or spans[i][2] != tid:
            continue
        counts = facts.optimizer_ops[spans[i][3]]
        counts["ops"] += 1
        if name.startswith("aten::_foreach_"):
            counts["foreach"] += 1
        elif name.startswith("aten::_fused_"):
            counts["fused"] += 1
    facts.top_ops.clear()


def _is_nchw(sizes: list[int], strides: list[int]) -> bool:
    """Whether a 4-D tensor is contiguous in NCHW order (not channels_last)."""
    if len(sizes) != 4 or len(strides) != 4 or sizes[1] == 1:
        return False
    return strides[1] > strides[2] >= strides[3]


def _flops_and_device(
    facts: Facts, results: Any, lo: int, hi: int
) -> list[tuple[str, int, int, int]]:
    """FLOPs of every op between ``lo`` and ``hi``, and on CUDA the GPU's work then; returns
    the CUDA runtime's blocking calls (name, thread, start, duration)."""
    from torch.autograd import DeviceType

    calls = []
    for e in results.events():
        if not lo <= e.start_ns() <= hi:
            continue
        flops = e.flops()
        if flops:
            facts.flops += flops
            if e.name().startswith("aten::conv"):
                facts.conv_forward_flops += flops
        if e.device_type() != DeviceType.CUDA:
            if e.name() in CUDA_SYNC_CALLS:
                calls.append((e.name(), e.start_thread_id(), e.start_ns(), e.duration_ns()))
            continue
        start, end, name = e.start_ns(), e.end_ns(), e.name()
        if end <= start:
            continue
        facts.gpu_busy.append((start, end))
        lowered = name.lower()
        if "nccl" in lowered:
            facts.nccl.append((start, end))
        elif "memcpy" not in lowered and "memset" not in lowered:
            facts.compute.append((start, end))
            facts.gpu_kernels_ns += end - start
        if "pageable" in lowered:
            facts.pageable.append((end - start, name))
    return calls
