"""Measure each tip's claim: the before and the after form, timed with ``torch.utils.benchmark``.

For every tip with a ``bench`` section, `measure_tip` runs ``bench.setup`` once in a
fresh namespace, then times ``bench.before`` and ``bench.after`` with
`torch.utils.benchmark.Timer` (fixed thread count; ``blocked_autorange`` warms up,
picks a block size and, on CUDA, synchronises around every block) in interleaved
replicates, so a slow drift of the machine hits both forms alike. Statistics and verdicts
come from `generator.stats`; the output is a `generator.results.ResultsFile`.

Sizes: a tip measures once per entry of ``bench.sizes.<device>`` (one per regime, e.g.
``launch-bound`` and ``compute-bound`` on CUDA); the entry's names are defined in the
namespace before ``bench.setup`` runs. A bench without sizes for the device runs once, as
the ``default`` regime.

The namespace is the ``__dict__`` of a real module, registered in ``sys.modules`` as
`NAMESPACE_MODULE` while the tip is measured, so code that imports the module of a
function defined in ``setup`` (``torch.compile`` does, when it inlines one) finds it.

Memory comes second: `run` times every tip first, then evaluates the ``bench.memory``
expressions of each tip in a fresh setup namespace. Bench code can call three helpers:
`tensor_bytes`, `saved_tensor_bytes` and ``peak_bytes`` (see
`make_peak_bytes`); ``device`` is predefined. Each tip runs in the benchmark's own
process; the global switches it may flip (grad mode, anomaly detection, matmul precision,
thread count, ...) are restored afterwards.

torch is imported inside the functions that measure, so importing this module is cheap.
"""

from __future__ import annotations

import datetime
import functools
import gc
import importlib.machinery
import math
import os
import platform
import shutil
import subprocess
import sys
import types
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from generator.errors import UserError
from generator.results import (
    SCHEMA_VERSION,
    Environment,
    FormTime,
    MemoryResult,
    ResultsFile,
    Settings,
    TimeResult,
    TipResult,
    code_hash,
)
from generator.schema import BenchSize, Tip
from generator.stats import (
    TOLERANCE,
    memory_ratio,
    memory_verdict,
    speedup,
    summarize,
    time_verdict,
)

FORMS = ("before", "after")

#: The name under which the bench namespace of the tip being measured is a module.
NAMESPACE_MODULE = "pytorch_tips_bench"


@dataclass(frozen=True)
class Plan:
    """Replicates and timing per replicate of a run."""

    quick: bool
    replicates: int
    min_run_time_s: float

    @classmethod
    def make(cls, quick: bool, replicates: int | None = None) -> Plan:
        """The default plan: 5 replicates of 0.1 s with ``quick``, else 7 of 0.25 s."""
        default = 5 if quick else 7
        return cls(quick, replicates or default, 0.1 if quick else 0.25)


def now() -> str:
    """The current UTC time, ISO 8601, to the second."""
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()


# --- helpers available to bench code -------------------------------------------------------


def tensor_bytes(*objs: Any) -> int:
    """Bytes of the distinct tensor storages reachable from ``objs``.

    Tensors count once however many views point at them. A module counts its parameters,
    buffers and their gradients; an optimizer counts its state (momentum buffers, Adam's
    moments) but not the parameters; dicts, lists, tuples and sets are searched.
    """
    import torch

    seen: dict[tuple[str, int], int] = {}

    def visit(obj: Any) -> None:
        if isinstance(obj, torch.Tensor):
            if obj.layout != torch.strided:
                return
            storage = obj.untyped_storage()
            if storage.nbytes():
                seen[(str(obj.device), storage.data_ptr())] = storage.nbytes()
        elif isinstance(obj, torch.nn.Module):
            for tensor in [*obj.parameters(), *obj.buffers()]:
                visit(tensor)
                visit(tensor.grad)
        elif isinstance(obj, torch.optim.Optimizer):
            visit(list(obj.state.values()))
        elif isinstance(obj, dict):
            for value in obj.values():
                visit(value)
        elif isinstance(obj, list | tuple | set | frozenset):
            for value in obj:
                visit(value)

    for obj in objs:
        visit(obj)
    return sum(seen.values())


def saved_tensor_bytes(fn: Callable[[], Any]) -> int:
    """Bytes of the distinct tensors autograd saves for backward while ``fn()`` runs.

    This is the activation memory a forward pass keeps alive until ``backward()``.
    Parameters (and views of them) are not counted: they exist either way.
    """
    import torch

    seen: dict[tuple[str, int], int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        base = tensor._base if tensor._base is not None else tensor
        if not isinstance(base, torch.nn.Parameter):
            storage = tensor.untyped_storage()
            seen[(str(tensor.device), storage.data_ptr())] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        out = fn()
    del out
    return sum(seen.values())


@functools.cache
def _glibc() -> Any:
    """glibc as a ctypes library on Linux, else None (looked up once: ``find_library`` runs
    ``ldconfig``, and the peak helper calls into glibc before every measurement)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not (sys.platform.startswith("linux") and name):
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


def _glibc_returns_freed_memory() -> None:
    """Make glibc serve every allocation of 64 KiB or more with mmap and unmap it on free, so
    the resident set follows the live tensors (by default the threshold grows to 32 MiB and
    freed blocks stay in the heap, hiding a second allocation of the same size)."""
    with suppress(AttributeError):
        if (libc := _glibc()) is not None:
            libc.mallopt(-3, 64 * 1024)  # M_MMAP_THRESHOLD (fixed from now on)


def _malloc_trim() -> None:
    """Return glibc's free heap pages to the system, so the resident set is the live set."""
    with suppress(AttributeError):
        if (libc := _glibc()) is not None:
            libc.malloc_trim(0)


def _proc_status(*keys: str) -> dict[str, int]:
    out = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in keys:
                out[key] = int(value.split()[0]) * 1024
    return out


def make_peak_bytes(device: str) -> Callable[..., int]:
    """The ``peak_bytes(fn, repeat=3)`` helper of bench code on ``device``.

    On CUDA it is the growth of ``torch.cuda.max_memory_allocated()`` while ``fn()`` runs.
    On CPU it is the growth of the process's peak resident set (Linux: ``VmHWM`` after
    resetting it through ``/proc/self/clear_refs``), which counts real pages, so only
    allocations of 64 KiB or more show reliably. The smallest of ``repeat`` runs is
    returned: other activity can only add to a peak.
    """
    import torch

    def peak_cuda(fn: Callable[[], Any]) -> int:
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        out = fn()
        torch.cuda.synchronize()
        del out
        return max(torch.cuda.max_memory_allocated() - base, 0)

    def peak_cpu(fn: Callable[[], Any]) -> int:
        _malloc_trim()  # free heap pages would otherwise serve fn() without showing as growth
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")  # reset VmHWM to the current resident set
        base = _proc_status("VmRSS")["VmRSS"]
        out = fn()
        peak = _proc_status("VmHWM")["VmHWM"]
        del out
        return max(peak - base, 0)

    def peak_bytes(fn: Callable[[], Any], repeat: int = 3) -> int:
        if device != "cuda":  # on first use, not when the namespace is made for timing
            _glibc_returns_freed_memory()
        results = []
        for _ in range(repeat):
            gc.collect()
            results.append(peak_cuda(fn) if device == "cuda" else peak_cpu(fn))
        return min(results)

    return peak_bytes


# --- environment ---------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(("model name", "Model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def gpu_driver(index: int = 0) -> str | None:
    """The NVIDIA driver version, from pynvml when it is installed, else from ``nvidia-smi``
    when it is on the PATH; ``None`` when neither answers. Never raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the old `pynvml` package warns on import
            import pynvml  # type: ignore[import-not-found]  # optional: nvidia-ml-py

        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # noqa: BLE001 - not installed, no NVML library, no permission
        pass
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        proc = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader", f"--id={index}"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = proc.stdout.strip().splitlines()
    return lines[0].strip() if proc.returncode == 0 and lines else None


def environment(device: str, num_threads: int) -> Environment:
    """Describe this machine and its software for a results file.

    On CUDA: the current GPU's name, compute capability and memory, the number of GPUs,
    the driver (see `gpu_driver`), and the CUDA and cuDNN versions torch was built with.
    """
    import torch

    gpu: dict[str, Any] = {}
    if device == "cuda":
        index = torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        gpu = dict(
            gpu_name=props.name,
            gpu_compute_capability=f"{props.major}.{props.minor}",
            gpu_memory_bytes=int(props.total_memory),
            gpu_count=torch.cuda.device_count(),
            gpu_driver=gpu_driver(index),
            cuda=torch.version.cuda,
            cudnn=None if cudnn is None else str(cudnn),
        )
    return Environment(
        cpu_model=_cpu_model(),
        cpu_arch=platform.machine(),
        cpu_cores=_cores(),
        cpu_capability=torch.backends.cpu.get_cpu_capability(),
        torch=torch.__version__,
        python=platform.python_version(),
        platform=platform.platform(terse=True),
        num_threads=num_threads,
        date=now(),
        **gpu,
    )


def settings(plan: Plan) -> Settings:
    """The settings block of a results file measured with ``plan``."""
    return Settings(
        quick=plan.quick,
        replicates=plan.replicates,
        min_run_time_s=plan.min_run_time_s,
        tolerance=TOLERANCE,
    )


def check_device(device: str) -> None:
    """Fail with one line when ``device`` cannot be measured here.

    Raises:
        UserError: ``cuda`` without a usable CUDA GPU.
    """
    if device != "cuda":
        return
    import torch

    if not torch.cuda.is_available():
        raise UserError(
            "no CUDA GPU here: CUDA figures are only measured on a GPU (use --device cpu)"
        )
    try:
        torch.zeros(1, device="cuda").add_(1).item()
    except RuntimeError as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(f"the CUDA GPU does not work: {first}") from None


# --- measuring -----------------------------------------------------------------------------


@contextmanager
def _restored_torch_state():  # noqa: ANN202
    """Undo global switches a tip's bench code may flip, so the next tip starts clean."""
    import torch

    state = (
        torch.is_grad_enabled(),
        torch.are_deterministic_algorithms_enabled(),
        torch.is_anomaly_enabled(),
        torch.get_default_dtype(),
        torch.get_float32_matmul_precision(),
        torch.backends.cudnn.benchmark,
        torch.backends.cudnn.deterministic,
        torch.backends.cudnn.allow_tf32,
        torch.get_num_threads(),
    )
    try:
        yield
    finally:
        grad, deterministic, anomaly, dtype, precision, *cudnn, threads = state
        torch.set_grad_enabled(grad)
        torch.use_deterministic_algorithms(deterministic)
        torch.autograd.set_detect_anomaly(anomaly)
        torch.set_default_dtype(dtype)
        torch.set_float32_matmul_precision(precision)
        cudnn_benchmark, cudnn_deterministic, cudnn_tf32 = cudnn
        torch.backends.cudnn.benchmark = cudnn_benchmark
        torch.backends.cudnn.deterministic = cudnn_deterministic
        torch.backends.cudnn.allow_tf32 = cudnn_tf32
        torch.set_num_threads(threads)


@contextmanager
def bench_namespace(device: str, size: BenchSize | None = None) -> Iterator[dict[str, Any]]:
    """A fresh namespace for a tip's bench code, registered as the module
    `NAMESPACE_MODULE` until the block ends.

    It holds ``torch``, ``device``, the helpers (``tensor_bytes``, ``saved_tensor_bytes``,
    ``peak_bytes``) and the names of ``size``. Being a real module lets ``torch.compile``
    import the module of a function defined in ``setup`` (``import_module(fn.__module__)``
    when it inlines the function), and lets pickle find such a function by name. On exit the
    previous registration is restored; on CUDA, cached blocks are released for the next tip.
    """
    import torch

    module = types.ModuleType(NAMESPACE_MODULE, "Bench namespace of the tip being measured.")
    module.__spec__ = importlib.machinery.ModuleSpec(NAMESPACE_MODULE, loader=None)
    ns = module.__dict__
    ns.update(
        torch=torch,
        device=device,
        tensor_bytes=tensor_bytes,
        saved_tensor_bytes=saved_tensor_bytes,
        peak_bytes=make_peak_bytes(device),
    )
    if size is not None:
        ns.update(size.values)
    previous = sys.modules.get(NAMESPACE_MODULE)
    sys.modules[NAMESPACE_MODULE] = module
    try:
        yield ns
    finally:
        if previous is None:
            sys.modules.pop(NAMESPACE_MODULE, None)
        else:
            sys.modules[NAMESPACE_MODULE] = previous
        # Drop the tip's tensors and models (on CUDA, then release the cached blocks). Dunder
        # names stay: torch.compile keeps its own there and removes them itself later.
        for name in [k for k in ns if not k.startswith("__")]:
            del ns[name]
        if device == "cuda":
            gc.collect()
            torch.cuda.empty_cache()


def size_entries(tip: Tip, device: str) -> list[BenchSize | None]:
    """What ``tip`` is measured at on ``device``: its ``bench.sizes`` entries there, in
    order, or ``[None]`` (one run, the ``default`` regime) for a bench without them."""
    assert tip.bench is not None
    sizes = tip.bench.sizes.for_device(device) if tip.bench.sizes is not None else []
    return list(sizes) or [None]


def regime_of(size: BenchSize | None) -> str:
    """The regime a size entry measures (``default`` without sizes)."""
    return "default" if size is None else size.regime


def _form_time(medians: list[float], blocks: list[float], runs: list[int]) -> FormTime:
    s = summarize(blocks)
    return FormTime(
        median_s=s.median,
        q1_s=s.q1,
        q3_s=s.q3,
        min_s=s.min,
        max_s=s.max,
        replicate_medians_s=medians,
        blocks=s.n,
        runs_per_block=runs,
    )


def _finite(value: float) -> float | None:
    return None if math.isinf(value) else value


def _prepare(tip: Tip, ns: dict[str, Any]) -> dict[str, Any]:
    """Run the tip's setup in ``ns``; return its two statements compiled."""
    bench = tip.bench
    assert bench is not None and bench.before is not None and bench.after is not None
    where = f"tips/{tip.id}.yaml"
    exec(compile(bench.setup or "pass", f"{where}:bench.setup", "exec"), ns)
    return {f: compile(getattr(bench, f), f"{where}:bench.{f}", "exec") for f in FORMS}


def measure_time(
    tip: Tip,
    device: str,
    plan: Plan,
    num_threads: int,
    tick: Callable[[], None] = lambda: None,
    size: BenchSize | None = None,
) -> TimeResult:
    """Time the before and after statements of ``tip`` at ``size`` in interleaved replicates.

    ``tick`` is called after each timed replicate of each form (2 × replicates times).
    Exceptions of the bench code propagate.
    """
    assert tip.bench is not None
    with bench_namespace(device, size) as ns:
        return _time_forms(tip, ns, _prepare(tip, ns), plan, num_threads, tick)


def _time_forms(
    tip: Tip,
    ns: dict[str, Any],
    compiled: dict[str, Any],
    plan: Plan,
    num_threads: int,
    tick: Callable[[], None],
) -> TimeResult:
    from torch.utils.benchmark import Timer

    assert tip.bench is not None
    for form in FORMS:  # first runs: lazy initialisation, compilation, caches
        for _ in range(2):
            exec(compiled[form], dict(ns))
    timers = {
        f: Timer(stmt=getattr(tip.bench, f), globals=ns, num_threads=num_threads) for f in FORMS
    }
    medians: dict[str, list[float]] = {f: [] for f in FORMS}
    blocks: dict[str, list[float]] = {f: [] for f in FORMS}
    runs: dict[str, list[int]] = {f: [] for f in FORMS}
    for rep in range(plan.replicates):
        for form in FORMS if rep % 2 == 0 else FORMS[::-1]:
            m = timers[form].blocked_autorange(min_run_time=plan.min_run_time_s)
            medians[form].append(m.median)
            blocks[form].extend(m.times)
            runs[form].append(m.number_per_run)
            tick()
    ratio = speedup(medians["before"], medians["after"])
    return TimeResult(
        before=_form_time(medians["before"], blocks["before"], runs["before"]),
        after=_form_time(medians["after"], blocks["after"], runs["after"]),
        ratio=ratio.value,
        low=ratio.low,
        high=ratio.high,
        verdict=time_verdict(ratio),
    )


def measure_memory(tip: Tip, device: str, size: BenchSize | None = None) -> MemoryResult:
    """Evaluate ``bench.memory`` of ``tip`` at ``size``: each expression right after one
    more run of its form's statement, in a copy of the setup namespace (so it sees what the
    run left).

    On CPU this switches glibc to unmapping freed blocks for the rest of the process (see
    ``peak_bytes``), which changes allocation costs: measure time first.
    """
    assert tip.bench is not None and tip.bench.memory is not None
    if device != "cuda":
        _glibc_returns_freed_memory()
    nbytes = {}
    with bench_namespace(device, size) as ns:
        compiled = _prepare(tip, ns)
        for form in FORMS:
            scope = dict(ns)
            exec(compiled[form], scope)
            expr = getattr(tip.bench.memory, form).strip()
            code = compile(expr, f"tips/{tip.id}.yaml:bench.memory.{form}", "eval")
            nbytes[form] = int(eval(code, scope))
            del scope
    return MemoryResult(
        before_bytes=nbytes["before"],
        after_bytes=nbytes["after"],
        ratio=_finite(memory_ratio(nbytes["before"], nbytes["after"])),
        verdict=memory_verdict(nbytes["before"], nbytes["after"]),
    )


def _error(err: Exception) -> str:
    return f"{type(err).__name__}: {err}".splitlines()[0][:300]


def measure_tip(
    tip: Tip,
    device: str,
    plan: Plan,
    num_threads: int,
    tick: Callable[[], None] = lambda: None,
    memory: bool = True,
    size: BenchSize | None = None,
) -> TipResult:
    """Measure one tip on ``device`` at ``size`` (one regime): time, then (with ``memory``)
    bytes.

    A failure of the bench code is recorded in the result's ``error``, not raised.
    """
    bench = tip.bench
    assert bench is not None
    result = TipResult(
        kind=bench.kind,
        code=code_hash(tip, device),
        measured_at=now(),
        sizes=dict(size.values) if size is not None else {},
    )
    try:
        with _restored_torch_state():
            result = result.model_copy(
                update={"time": measure_time(tip, device, plan, num_threads, tick, size)}
            )
    except Exception as err:  # noqa: BLE001 - any error in bench code is a result to report
        return result.model_copy(update={"error": _error(err)})
    return add_memory(tip, device, result, size) if memory else result


def add_memory(
    tip: Tip, device: str, result: TipResult, size: BenchSize | None = None
) -> TipResult:
    """``result`` with the memory figures of ``tip`` at ``size`` (or the error measuring
    them) added."""
    if tip.bench is None or tip.bench.memory is None or result.error:
        return result
    try:
        with _restored_torch_state():
            return result.model_copy(update={"memory": measure_memory(tip, device, size)})
    except Exception as err:  # noqa: BLE001
        return result.model_copy(update={"error": _error(err)})


def benchmarkable(tips: Iterable[Tip], device: str) -> tuple[list[Tip], list[Tip]]:
    """Split tips with a bench section into (measured on ``device``, not measurable there)."""
    measured, skipped = [], []
    for tip in tips:
        if tip.bench is None:
            continue
        (measured if device in tip.bench.measured_devices() else skipped).append(tip)
    return measured, skipped


def run(
    tips: Sequence[Tip],
    device: str = "cpu",
    quick: bool = False,
    num_threads: int | None = None,
    replicates: int | None = None,
    progress: bool = True,
    env: Environment | None = None,
    save: Callable[[ResultsFile], None] | None = None,
) -> ResultsFile:
    """Measure ``tips`` (all of which must have a bench section measurable on ``device``),
    each once per size entry of the device (see `size_entries`).

    Args:
        tips: the tips to measure.
        device: ``cpu`` or ``cuda``.
        quick: shorter timing per replicate (the whole knowledge base in under 3 minutes).
        num_threads: torch intra-op threads while timing (default 1, as
            ``torch.utils.benchmark.Timer``: comparisons stay stable on a busy machine).
        replicates: interleaved replicates per form (default 5 with ``quick``, else 7).
        progress: show a progress bar on stderr.
        env: the environment to record (default: `environment` of this machine).
        save: called with the results so far after each tip is timed and after each tip's
            memory is measured (e.g. `generator.results.ResultsWriter`), so an
            interrupted run keeps what it measured.

    Raises:
        UserError: the device is not available.
    """
    from tqdm import tqdm

    check_device(device)
    threads = num_threads or 1
    plan = Plan.make(quick, replicates)
    env = env or environment(device, threads)
    results: dict[str, dict[str, TipResult]] = {}

    def snapshot() -> ResultsFile:
        return ResultsFile(
            schema_version=SCHEMA_VERSION,
            device=device,  # type: ignore[arg-type]
            environment=env,
            settings=settings(plan),
            results={k: dict(v) for k, v in results.items()},  # type: ignore[misc]
        )

    entries = {tip.id: size_entries(tip, device) for tip in tips}
    with_memory = [t for t in tips if t.bench is not None and t.bench.memory is not None]
    with tqdm(
        total=sum(len(e) for e in entries.values()) * 2 * plan.replicates
        + sum(len(entries[t.id]) for t in with_memory),
        desc=f"bench {device}",
        unit="rep",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        for tip in tips:  # all timings first: the memory phase changes how glibc allocates
            assert tip.id is not None
            results[tip.id] = {}
            for size in entries[tip.id]:
                regime = regime_of(size)
                bar.set_postfix_str(tip.id if regime == "default" else f"{tip.id} ({regime})")
                done = bar.n
                results[tip.id][regime] = measure_tip(
                    tip, device, plan, threads, tick=lambda: bar.update(1), memory=False, size=size
                )
                bar.update(done + 2 * plan.replicates - bar.n)  # a failure skips replicates
            if save is not None:
                save(snapshot())
        for tip in with_memory:
            assert tip.id is not None
            for size in entries[tip.id]:
                regime = regime_of(size)
                bar.set_postfix_str(f"{tip.id} (memory)")
                results[tip.id][regime] = add_memory(tip, device, results[tip.id][regime], size)
                bar.update(1)
            if save is not None:
                save(snapshot())
    return snapshot()
