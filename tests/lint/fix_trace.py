"""The child's side of tests/lint/test_fix_equivalence.py: run programs (an original and its
fixed texts) and record what each builds, in one process that imported torch once.

`main` installs the recorders once, then runs each job in turn (a fresh ``__main__``, folder,
RNG and autocast state; a check that nothing else of the process changed) and writes one trace
per job to a JSON file. A trace is

* ``events``: what reached torch, in order, from the real objects: each autocast's device,
  dtype and ``enabled`` after construction and the autocast state
  (`torch.is_autocast_enabled`, `torch.get_autocast_dtype` for ``cpu`` and ``cuda``) after
  each enter and exit; each GradScaler's device, `is_enabled()`, scale and growth settings;
  the bound arguments (defaults applied) that reach `torch.load`, `custom_fwd`/`custom_bwd`,
  `clip_grad_norm_`, the `nn.init.*_` functions, `zero_grad` and the CUDA memory statistics;
  non-blocking copies; learning rates read outside `step()` next to the rate in use; each
  ``autograd.Function`` the program defines, applied with CUDA autocast off and on;
* ``namespace``: every global the program leaves, summarised (tensors with dtype, shape,
  device and values; modules with parameters and gradients; optimizers, schedulers, scalers,
  autocast objects, the closures of decorated functions);
* ``stdout`` and ``raised`` (the exception the program ended with, if any).

Deprecated names reach the same recorders as their replacements (``torch.cuda.amp.autocast``
calls ``torch.amp.autocast.__init__``; ``memory_cached`` calls ``memory_reserved``), so an
original and a correct fix leave equal traces. No GPU is needed: AMP is told CUDA is there
(``amp_definitely_not_available``, ``is_bf16_supported``), so a CUDA autocast or scaler keeps
its real ``enabled`` state; tensors sent to ``cuda`` are made on ``meta`` (a
`TorchFunctionMode`), and the CUDA memory statistics are recorded, not executed.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import json
import math
import os
import random
import signal
import sys
import tempfile
import types
import warnings
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

EVENTS: list[list[Any]] = []
ROOT = tempfile.gettempdir()  # `main` makes a folder for the jobs' files
_DEVICES = ("cpu", "cuda")


# --- summaries: JSON values that two equal objects share ------------------------------------


def summary(v: Any, depth: int = 0) -> Any:
    if depth > 6:
        return "..."
    d = depth + 1
    if v is None or isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else repr(v)
    if isinstance(v, torch.dtype | torch.device | torch.Size):
        return str(v)
    if isinstance(v, torch.Tensor):
        return {"tensor": _tensor(v)}
    if isinstance(v, types.ModuleType):
        return {"module": v.__name__}
    if isinstance(v, torch.nn.Module):
        return {
            "nn": type(v).__name__,
            "training": v.training,
            "params": {n: [_tensor(p), summary(p.grad, d)] for n, p in v.named_parameters()},
            "buffers": {n: _tensor(b) for n, b in v.named_buffers()},
        }
    if isinstance(v, torch.optim.Optimizer):
        params = [p for g in v.param_groups for p in g["params"]]
        return {
            "optimizer": type(v).__name__,
            "groups": [
                summary({k: x for k, x in g.items() if k != "params"}, d) for g in v.param_groups
            ],
            "state": [summary(v.state.get(p), d) for p in params],
        }
    if isinstance(v, torch.optim.lr_scheduler.LRScheduler):
        return {"scheduler": type(v).__name__, "epoch": v.last_epoch, "lr": summary(v._last_lr, d)}
    if isinstance(v, torch.amp.GradScaler):  # torch.cuda.amp.GradScaler is a subclass
        return {"GradScaler": _scaler(v)}
    if isinstance(v, torch.amp.autocast):  # so are torch.{cuda,cpu}.amp.autocast
        return {"autocast": _autocast(v)}
    if isinstance(v, torch.utils.data.DataLoader):
        keys = ("batch_size", "num_workers", "pin_memory", "drop_last")
        return {"DataLoader": {k: getattr(v, k) for k in keys} | {"n": len(v.dataset)}}
    if isinstance(v, dict):
        return {"dict": [[summary(k, d), summary(x, d)] for k, x in list(v.items())[:64]]}
    if isinstance(v, list | tuple):
        return {type(v).__name__: [summary(x, d) for x in v[:64]]}
    if isinstance(v, staticmethod | classmethod):
        return {type(v).__name__: summary(v.__func__, d)}
    if isinstance(v, functools.partial):
        return {"partial": [summary(v.func, d), summary(v.args, d), summary(v.keywords, d)]}
    if isinstance(v, types.FunctionType):
        out: dict[str, Any] = {"function": v.__qualname__}
        if v.__module__ != "__main__" and v.__closure__:  # a decorator's wrapper: its settings
            names = v.__code__.co_freevars
            out["closure"] = {
                n: summary(_cell(c), d) for n, c in zip(names, v.__closure__, strict=True)
            }
        return out
    if isinstance(v, type):
        if v.__module__ == "__main__":
            attrs = {k: summary(x, d) for k, x in vars(v).items() if not k.startswith("__")}
            return {"class": v.__qualname__, "attrs": attrs}
        return {"type": f"{v.__module__}.{v.__qualname__}"}
    if type(v).__module__ == "__main__" and hasattr(v, "__dict__"):
        return {"instance": type(v).__qualname__, "attrs": summary(vars(v), d)}
    return {"object": type(v).__qualname__}


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return "<empty>"


def _tensor(t: torch.Tensor) -> Any:
    # a leaf keeps its .grad; a copy of one passes gradients back to it
    grad, leaf = t.requires_grad, t.is_leaf
    t = t.detach()
    values: Any = None
    if t.device.type != "meta":  # a plain list of values: equal tensors, equal lists
        flat = t.cpu().flatten()
        if flat.numel() > 256 and flat.is_floating_point():
            flat = torch.stack([flat.double().sum(), flat.double().abs().sum()])
        values = [summary(x) for x in flat.tolist()]
    return [str(t.dtype), list(t.shape), t.device.type, grad, values, leaf]


def _autocast(a: Any) -> Any:
    return [a.device, str(a.fast_dtype), bool(a._enabled), bool(a._cache_enabled)]


def _scaler(s: Any) -> Any:
    out = [s._device, s.is_enabled()]
    if s.is_enabled():
        out += [
            s.get_scale(),
            s.get_growth_factor(),
            s.get_backoff_factor(),
            s.get_growth_interval(),
        ]
    return out


def amp_state() -> Any:
    state = {d: [torch.is_autocast_enabled(d), str(torch.get_autocast_dtype(d))] for d in _DEVICES}
    return state | {"cache": torch.is_autocast_cache_enabled()}


def event(kind: str, data: Any) -> None:
    """Record ``data`` (a dict: each value summarised) under ``kind``."""
    if isinstance(data, dict):
        EVENTS.append([kind, {k: summary(v) for k, v in data.items()}])
    else:
        EVENTS.append([kind, summary(data)])


# --- recorders ------------------------------------------------------------------------------


def _record_call(
    kind: str, orig: Any, stub: Any = None, skip: tuple[str, ...] = (), adapt: Any = None
) -> Any:
    """A wrapper of ``orig`` that records its bound arguments (defaults applied), then calls
    ``orig``, or returns ``stub()`` instead (a CUDA call that cannot run here). A decorator
    called for its settings alone (``custom_fwd(device_type=...)``, no function yet) is
    recorded when it receives the function."""
    signature = inspect.signature(orig)

    @functools.wraps(orig)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            data = {k: x for k, x in bound.arguments.items() if k not in skip}
        except TypeError as err:  # the call fails the same way below
            data = {"bad-call": str(err)}
        if adapt is not None:
            args, kwargs = adapt(args, kwargs)
        try:
            return stub() if stub is not None else orig(*args, **kwargs)
        finally:  # after the call: an in-place function's tensor as it left it
            if not (kind.startswith("custom_") and next(iter(data.values()), None) is None):
                event(kind, data)

    return wrapper


def _replace_everywhere(replacements: dict[int, Any]) -> None:
    """Point every reference to the originals (``id`` -> wrapper) in torch's modules, and in
    the closures of their functions (``nn.init``'s deprecated aliases), at the wrappers."""
    for mod in list(sys.modules.values()):
        if not isinstance(mod, types.ModuleType) or not mod.__name__.startswith("torch"):
            continue
        for key, value in list(vars(mod).items()):
            if id(value) in replacements:
                setattr(mod, key, replacements[id(value)])
            elif isinstance(value, types.FunctionType) and value.__closure__:
                for cell in value.__closure__:
                    if id(_cell(cell)) in replacements:
                        cell.cell_contents = replacements[id(_cell(cell))]


def _after(cls: type, name: str, record: Any) -> None:
    orig = cls.__dict__[name]

    @functools.wraps(orig)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = orig(self, *args, **kwargs)
        record(self)
        return out

    setattr(cls, name, wrapper)


def _lr_read(method: str, orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = orig(self, *args, **kwargs)
        if not self._get_lr_called_within_step:
            in_use = [g["lr"] for g in self.optimizer.param_groups]
            event("lr-read", {"method": method, "value": out, "in_use": in_use})
        return out

    return wrapper


def install() -> None:
    """The recorders, and AMP told that CUDA is available (autocast and GradScaler keep
    their real ``enabled`` state on a machine without a GPU)."""
    torch.cuda.amp.common.amp_definitely_not_available = lambda: False
    torch.cuda.is_bf16_supported = lambda *a, **k: True
    ac = torch.amp.autocast_mode.autocast
    _after(ac, "__init__", lambda a: event("autocast", _autocast(a)))
    _after(ac, "__enter__", lambda a: event("autocast-enter", amp_state()))
    _after(ac, "__exit__", lambda a: event("autocast-exit", amp_state()))
    _after(torch.amp.GradScaler, "__init__", lambda s: event("GradScaler", _scaler(s)))
    for cls, kind in ((torch.optim.Optimizer, "optimizer"), (torch.nn.Module, "module")):
        cls.zero_grad = _record_call(f"zero_grad.{kind}", cls.zero_grad, skip=("self",))
    sched = torch.optim.lr_scheduler
    sched.LRScheduler.get_last_lr = _lr_read("get_last_lr", sched.LRScheduler.get_last_lr)
    for cls in vars(sched).values():
        if isinstance(cls, type) and issubclass(cls, sched.LRScheduler) and "get_lr" in vars(cls):
            cls.get_lr = _lr_read("get_lr", cls.get_lr)
    calls: dict[int, Any] = {}

    def wrap(kind: str, orig: Any, stub: Any = None, adapt: Any = None) -> None:
        calls[id(orig)] = _record_call(kind, orig, stub, adapt=adapt)

    def map_location(args: Any, kwargs: Any) -> Any:  # a CUDA map_location: onto meta
        args = tuple(_on_meta(a) if i == 1 else a for i, a in enumerate(args))
        return args, {k: _on_meta(v) if k == "map_location" else v for k, v in kwargs.items()}

    wrap("load", torch.serialization.load, adapt=map_location)
    wrap("custom_fwd", torch.amp.autocast_mode.custom_fwd)
    wrap("custom_bwd", torch.amp.autocast_mode.custom_bwd)
    wrap("clip_grad_norm_", torch.nn.utils.clip_grad.clip_grad_norm_)
    for name in dir(torch.nn.init):
        if name.endswith("_") and not name.startswith("_"):
            wrap(f"init.{name}", getattr(torch.nn.init, name))
    for name in ("reset_peak_memory_stats", "memory_reserved", "max_memory_reserved",
                 "memory_allocated", "max_memory_allocated"):  # fmt: skip
        wrap(f"cuda.{name}", getattr(torch.cuda.memory, name), stub=lambda: 0)
    _replace_everywhere(calls)


def _on_meta(v: Any) -> Any:
    if isinstance(v, torch.device) and v.type == "cuda":
        return torch.device("meta")
    if isinstance(v, str) and v.split(":")[0] == "cuda":
        return "meta"
    return v


class CudaOnMeta(TorchFunctionMode):
    """Tensors sent to or made on ``cuda`` are made on ``meta`` (dtype, shape and device
    kept, no values); non-blocking copies are recorded."""

    def __torch_function__(self, func: Any, types_: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = {k: _on_meta(v) if k == "device" else v for k, v in (kwargs or {}).items()}
        if func is torch.Tensor.cuda:
            blocking = not (kwargs.get("non_blocking") or (len(args) > 2 and args[2] is True))
            if not blocking:
                event("copy", {"to": "cuda", "non_blocking": True})
            return args[0].to("meta")
        if func is torch.Tensor.to:
            args = tuple(_on_meta(a) for a in args)
            flags = [a for a in args[1:] if isinstance(a, bool)]
            if kwargs.get("non_blocking") or (flags and flags[0]):
                target = next((str(a) for a in args[1:] if not isinstance(a, bool)), None)
                event("copy", {"to": kwargs.get("device", target), "non_blocking": True})
        return func(*args, **kwargs)


# --- one job, in a fork ---------------------------------------------------------------------


def _probe_functions(namespace: dict[str, Any]) -> None:
    """Apply each autograd.Function the program defines, with CUDA autocast off and on."""
    for name, cls in sorted(namespace.items()):
        if not (isinstance(cls, type) and issubclass(cls, torch.autograd.Function)):
            continue
        if cls.__module__ != "__main__":
            continue
        for enabled in (False, True):
            x = torch.ones(3, requires_grad=True)
            try:
                with torch.autocast("cuda", dtype=torch.float16, enabled=enabled):
                    y = cls.apply(x)
                y.sum().backward()
                event("probe", {"class": name, "enabled": enabled, "out": y, "grad": x.grad})
            except Exception as err:  # recorded: the fixed program must fail alike
                event("probe", {"class": name, "raised": type(err).__name__})


def _reset() -> None:
    """The process-wide state a program may leave behind, as a fresh process has it."""
    for device in _DEVICES:
        torch.set_autocast_enabled(device, False)
    torch.set_autocast_dtype("cpu", torch.bfloat16)
    torch.set_autocast_dtype("cuda", torch.float16)
    torch.set_autocast_cache_enabled(True)
    torch.set_grad_enabled(True)
    torch.set_default_dtype(torch.float32)
    torch.manual_seed(0)
    random.seed(0)
    EVENTS.clear()


def process_state() -> dict[str, Any]:
    """What `_reset` does not restore and a program could change for the ones after it."""
    backends = torch.backends
    return {
        "default_device": str(torch.get_default_device()),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "matmul_precision": torch.get_float32_matmul_precision(),
        "cudnn": [
            backends.cudnn.benchmark,
            backends.cudnn.deterministic,
            backends.cudnn.allow_tf32,
        ],
        "cuda_tf32": backends.cuda.matmul.allow_tf32,
        "inference_mode": torch.is_inference_mode_enabled(),
        "threads": torch.get_num_threads(),
        "function_modes": len(torch.overrides._get_current_function_mode_stack()),
    }


def _timeout(signum: int, frame: Any) -> None:
    raise TimeoutError("the program ran past the time limit")


def run_job(job: dict[str, Any], timeout: int = 60) -> dict[str, Any]:
    """Run the world, then the program, in a fresh ``__main__`` and folder; its trace."""
    _reset()
    os.chdir(tempfile.mkdtemp(prefix="job-", dir=ROOT))
    module = types.ModuleType("__main__")
    module.__file__ = "program.py"
    sys.modules["__main__"] = module
    namespace = module.__dict__
    out = io.StringIO()
    raised = None
    signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(timeout)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(out):
            warnings.simplefilter("ignore")
            with CudaOnMeta():
                exec(compile(job["world"], "world.py", "exec"), namespace)
            EVENTS.clear()  # the world's own set-up is not the program's
            try:
                with CudaOnMeta():
                    exec(compile(job["code"], "program.py", "exec"), namespace)
            except Exception as err:
                raised = [type(err).__name__, str(err)[:300]]
            _probe_functions(namespace)
    finally:
        signal.alarm(0)
    names = {
        k: summary(v)
        for k, v in sorted(namespace.items())
        if not k.startswith(("_", "__")) and not isinstance(v, types.ModuleType)
    }
    return {"events": list(EVENTS), "namespace": names, "stdout": out.getvalue(), "raised": raised}


def main(jobs: list[dict[str, Any]], out_path: str, timeout: int = 60) -> None:
    """Run ``jobs`` one after the other in this process (the snippet harness's fork of its
    zygote: its own, for this batch alone) and write their traces, by key, to ``out_path``.
    Each starts from the state `_reset` restores; a job that leaves other process state
    changed (`process_state`) makes the next ones report a crash instead of a trace."""
    import shutil
    import traceback

    global ROOT
    root = ROOT = tempfile.mkdtemp(prefix="fixeq-")
    with warnings.catch_warnings():  # torch's own imports inside the recorders
        warnings.simplefilter("ignore")
        install()
    clean = process_state()
    traces: dict[str, Any] = {}
    leaked = None
    for job in jobs:
        if leaked is not None:
            traces[job["key"]] = {"crashed": leaked}
            continue
        try:
            traces[job["key"]] = run_job(job, timeout)
        except BaseException:
            traces[job["key"]] = {"crashed": traceback.format_exc()}
        if (state := process_state()) != clean:
            leaked = f"{job['key']} left the process changed: {state} (was {clean})"
    os.chdir("/")
    shutil.rmtree(root, ignore_errors=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(traces, f)
