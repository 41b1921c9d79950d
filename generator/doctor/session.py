"""One doctor's run: hooks on, the script run as ``__main__``, the profiler over the
measured steps, then the detections, in this process (one rank's, under torchrun).

The analysis runs inside the last measured step's post-hook, while the script's frames are
alive (its containers can be named, its process group is up for the ranks to exchange their
figures), then `DoctorStop` ends the script. A script that ends sooner is analysed on the
steps it ran. A failure of the doctor itself is kept apart from the script's own errors.
"""

from __future__ import annotations

import os
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.bench.machine import cpu_name
from generator.doctor import detect, detect_device, dynamo, frames, memory, ranks, script
from generator.doctor.hooks import DoctorStop, Recorder, public
from generator.doctor.model import Measurement
from generator.doctor.trace import Profiler


@dataclass
class Options:
    """What ``doctor``'s command line chose."""

    warmup: int = 3
    steps: int = 10
    profile: int = 3
    trace_dir: Path | None = None


class DoctorFailure(Exception):
    """The doctor's own analysis failed (not the script): reported in one line."""


@dataclass
class _State:
    profiler: Profiler | None = None
    window: list[float] = field(default_factory=lambda: [0.0, 0.0])
    measurement: Measurement | None = None
    failure: BaseException | None = None
    trace: Path | None = None
    compiled_before: list[Any] = field(default_factory=list)


def rank_and_world() -> tuple[int, int]:
    """This process's rank and the world size, from torchrun's environment."""
    try:
        return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        return 0, 1


def measure(
    path: Path,
    code: types.CodeType,
    args: list[str],
    options: Options,
    L: dict[str, str],
    progress: Callable[[str, int, int], None],
) -> tuple[script.Ran, Measurement, Path | None]:
    """Run the script under the doctor; how it ended, what was measured, the trace file.

    Raises:
        DoctorFailure: the doctor's own analysis failed.
    """
    import torch

    frames.resolve.cache_clear()
    frames.is_user_file.cache_clear()
    cuda = torch.cuda.is_available()
    state = _State(compiled_before=dynamo.before())

    def on_start() -> None:
        state.profiler = Profiler(cuda)
        state.profiler.start()

    def on_end() -> None:
        state.window[1] = time.time()
        scopes = memory.user_scopes(sys._getframe(1))
        try:
            state.measurement = _finish(rec, state, options, L, scopes)
        except Exception as err:  # the doctor's own failure, not the script's
            state.failure = err

    def mark() -> None:
        if state.profiler is not None:
            state.profiler.mark()

    rec = Recorder(
        options.warmup, options.steps, options.profile, on_start, on_end, progress, mark, cuda
    )
    rec.install()
    try:
        if options.warmup == 0:
            rec.begin()
        ran = script.run(path, code, args, DoctorStop)
    except BaseException:  # Ctrl-C: a profiler left running crashes the interpreter's exit
        if state.profiler is not None:
            state.profiler.stop()
        raise
    finally:
        rec.remove()
    if state.measurement is None and state.failure is None:
        state.window[1] = time.time()
        sys.path.insert(0, str(path.resolve().parent))  # as while it ran: the trace's names
        try:
            state.measurement = _finish(rec, state, options, L, [ran.namespace])
        except Exception as err:
            state.failure = err
        finally:
            sys.path.remove(str(path.resolve().parent))
    if state.profiler is not None:
        state.profiler.stop()
    if state.failure is not None:
        failure = state.failure
        raise DoctorFailure(f"{type(failure).__name__}: {failure}") from failure
    assert state.measurement is not None
    measurement = state.measurement
    measurement.outcome = _outcome(ran, measurement, rec)
    measurement.elapsed_s = ran.seconds
    measurement.error, measurement.exit_code = ran.error, ran.exit_code
    return ran, measurement, state.trace


def _outcome(ran: script.Ran, m: Measurement, rec: Recorder) -> str:
    if ran.how == "raised":
        return "raised"
    if rec.total_steps == 0:
        return "no_steps"
    if not m.steps:
        return "warmup_only"
    return ran.how


def _finish(
    rec: Recorder, state: _State, options: Options, L: dict[str, str], scopes: list[Any]
) -> Measurement:
    """Stop the profiler, read it, run the detections, exchange figures with the ranks."""
    rank, world = rank_and_world()
    m = Measurement(rank=rank, world_size=world, total_steps=rec.total_steps)
    m.steps = list(rec.measured)
    m.profiled_steps = list(rec.profiled)
    m.dataloaders = [public(d) for d in rec.loaders]
    m.optimizers = [public(o) for o in rec.optimizers]
    _device(m, rec)
    facts = None
    if state.profiler is not None and state.profiler.running:
        state.profiler.stop()
        if options.trace_dir is not None:
            state.trace = state.profiler.export(options.trace_dir, rank)
        facts = state.profiler.facts()
    compiled = dynamo.record(state.compiled_before)
    ev = detect.Evidence(rec, m, L, facts, compiled, (rec.began_wall, state.window[1]))
    ev.settings = _settings()
    if facts is not None and len(facts.marks) > 1:
        _memory(ev, scopes)
    elif m.device == "cuda":
        _memory(ev, [])
    findings = detect.step_time(ev) + detect.compiled(ev) + detect.memory(ev)
    findings += detect_device.device(ev)
    m.findings = findings
    if world > 1:
        ranks.exchange(m, L)
    return m


def _device(m: Measurement, rec: Recorder) -> None:
    import platform

    import torch

    kind = next((o["device"] for o in rec.optimizers if o.get("device")), "cpu")
    m.device = "cuda" if kind == "cuda" else str(kind)
    if m.device == "cuda":
        index = torch.cuda.current_device()
        m.device_name = torch.cuda.get_device_name(index)
        m.memory_capacity_bytes = int(torch.cuda.get_device_properties(index).total_memory)
    else:
        m.device_name = cpu_name() or platform.processor() or "CPU"


def _settings() -> dict[str, Any]:
    import torch

    tf32 = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0)
    return {"cudnn_benchmark": bool(torch.backends.cudnn.benchmark), "tf32_capable": tf32}


def _memory(ev: detect.Evidence, scopes: list[Any]) -> None:
    """Peak and per-step memory (CUDA: the allocator's statistics, read at each step's end;
    CPU: the profiler's allocation events), growth, and the leak sites."""
    m, facts = ev.m, ev.facts
    if m.device == "cuda":
        steps = m.steps + m.profiled_steps
        peaks = [s.peak_allocated for s in steps if s.peak_allocated is not None]
        m.peak_memory_bytes = max(peaks) if peaks else None
        ends = [s.allocated for s in steps if s.allocated is not None]
    elif facts is not None:
        per_step = memory.per_step(facts, m.device)
        for step, end, peak in zip(m.profiled_steps, per_step.end, per_step.peak, strict=False):
            step.allocated, step.peak_allocated = end, peak
        m.peak_memory_bytes = max(per_step.peak) if per_step.peak else None
        ends = per_step.end
    else:
        return
    m.growth_bytes_per_step = memory.slope(ends) if len(ends) >= 2 else None
    if facts is None:
        return
    ev.leaks = memory.leak_sites(facts, m.device)[:3]
    for site in ev.leaks:
        memory.explain(site, scopes)
