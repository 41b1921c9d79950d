"""The light-weight hooks: step boundaries, phase times, the DataLoader and optimizer as built.

Installed for the whole run, removed after it. What each costs, per call, is a couple of
``time.perf_counter()`` calls and a list append:

- the global optimizer step pre- and post-hooks (``torch.optim.optimizer``): a step ends
  when the first optimizer that steps (the primary one) finishes ``step()``;
- ``torch.autograd.backward`` (which ``Tensor.backward`` calls) and the DataLoader
  iterator's ``__next__``: the time inside them;
- ``DataLoader.__init__`` and the iterator's ``__init__``: the loader's settings as built,
  and the user's line that built it;
- ``Optimizer.zero_grad`` and ``Module.zero_grad``: ``set_to_none`` and the calling line.

A step's time splits into data (inside ``__next__``), backward, optimizer (inside ``step()``),
forward (the time before each backward call since the batch arrived: forward pass and loss)
and other (the rest: logging, ``zero_grad``, checkpoints). Nested calls count once, in the
outer phase.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from generator.doctor.frames import user_frame
from generator.doctor.model import Step


class DoctorStop(BaseException):
    """Raised from the last step's post-hook to end the script: a BaseException,
    so that the script's ``except Exception`` does not swallow it, while its ``finally``
    blocks and context managers still run."""


@dataclass
class ZeroGrad:
    """One ``zero_grad`` call site: how it zeroes, and how often it ran while measured."""

    set_to_none: bool
    path: str | None
    line: int | None
    owner: str  # "optimizer" or "module"
    calls: int = 0
    seconds: float = 0.0
    grad_bytes: int = 0


@dataclass
class Recorder:
    """Counts steps and times their phases, stage by stage: ``warmup`` steps, ``steps`` timed
    with these hooks alone, one step as the profiler starts (``settle``: its first step runs
    slower), then ``profile`` steps under the profiler, each ended by a ``mark``. Calls
    ``on_start`` as the profiler should start and ``on_end`` after the last step, then raises
    `DoctorStop`. With ``profile`` 0 the profiler never starts."""

    warmup: int
    steps: int
    profile: int
    on_start: Callable[[], None]
    on_end: Callable[[], None]
    progress: Callable[[str, int, int], None]
    mark: Callable[[], None]
    cuda: bool = False
    stage: str = "warmup"  # warmup, timing, settle, profiling, done
    total_steps: int = 0
    measured: list[Step] = field(default_factory=list)
    profiled: list[Step] = field(default_factory=list)
    loaders: list[dict[str, Any]] = field(default_factory=list)
    optimizers: list[dict[str, Any]] = field(default_factory=list)
    zero_grads: dict[tuple[str | None, int | None, bool], ZeroGrad] = field(default_factory=dict)
    started_at: float = field(default_factory=time.perf_counter)
    began_wall: float = 0.0  # time.time() when the timed steps began
    _primary: int | None = None
    _step_start: float = 0.0
    _intervals: list[tuple[str, float, float]] = field(default_factory=list)
    _depth: int = 0
    _opt_start: float = 0.0
    _undo: list[Callable[[], None]] = field(default_factory=list)
    _sites: weakref.WeakKeyDictionary[Any, tuple[str, int] | None] = field(
        default_factory=weakref.WeakKeyDictionary
    )

    @property
    def measuring(self) -> bool:
        """Whether the current step is timed (zero_grad's calls are counted then)."""
        return self.stage == "timing"

    def _timed(self, phase: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            if recorder._depth:
                return fn(*args, **kwargs)
            recorder._depth += 1
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                recorder._depth -= 1
                recorder._intervals.append((phase, start, time.perf_counter()))

        timed.__wrapped__ = fn  # type: ignore[attr-defined]
        return timed

    def _pre_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self._primary is None:
            self._primary = id(optimizer)
            if self.stage == "warmup":
                self._step_start = self.started_at
        if id(optimizer) not in {o["id"] for o in self.optimizers}:
            self.optimizers.append(_optimizer_info(optimizer, self._sites.get(optimizer)))
        if not self._depth:
            self._opt_start = time.perf_counter()
        self._depth += 1

    def _post_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self._depth = max(0, self._depth - 1)
        now = time.perf_counter()
        if not self._depth:
            self._intervals.append(("optimizer", self._opt_start, now))
        if id(optimizer) != self._primary:
            return
        self.total_steps += 1
        if self.stage == "timing":
            self.measured.append(self._close_step(now))
        elif self.stage == "profiling":
            self.profiled.append(self._close_step(now))
            self.mark()
        self._intervals.clear()
        self._step_start = now
        self._advance()

    def _advance(self) -> None:
        """Move to the next stage after a step."""
        if self.stage == "warmup":
            if self.total_steps >= self.warmup:
                self.begin()
            else:
                self.progress("warmup", self.total_steps, self.warmup)
        elif self.stage == "timing":
            self.progress("timing", len(self.measured), self.steps)
            if len(self.measured) >= self.steps:
                if not self.profile:
                    self._end()
                self.stage = "settle"
                self.on_start()
                self._step_start = time.perf_counter()
        elif self.stage == "settle":
            self.stage = "profiling"
            self.mark()
            self._step_start = time.perf_counter()
        elif self.stage == "profiling":
            self.progress("profiling", len(self.profiled), self.profile)
            if len(self.profiled) >= self.profile:
                self._end()

    def _end(self) -> None:
        self.stage = "done"
        self.on_end()
        raise DoctorStop

    def begin(self) -> None:
        """Time the steps from now on (after the warm-up, or at once with ``--warmup 0``)."""
        self.stage = "timing"
        self.began_wall = time.time()
        self.progress("timing", 0, self.steps)
        self._step_start = time.perf_counter()

    def _close_step(self, end: float) -> Step:
        phases = dict.fromkeys(("data", "forward", "backward", "optimizer", "other"), 0.0)
        cursor = self._step_start
        for phase, start, stop in sorted(self._intervals, key=lambda i: i[1]):
            if start < cursor:  # began before the step (or overlaps): count what is inside
                start = cursor
            gap = max(0.0, start - cursor)
            phases["forward" if phase == "backward" else "other"] += gap
            phases[phase] += max(0.0, stop - start)
            cursor = max(cursor, stop)
        phases["other"] += max(0.0, end - cursor)
        step = Step(seconds=end - self._step_start, phases=phases)
        if self.cuda:
            _cuda_memory(step)
        return step

    # -- what the script builds ----------------------------------------------------------

    def _remember_site(self, init: Callable[..., Any]) -> Callable[..., Any]:
        """``init`` (a DataLoader's or an optimizer's), remembering the user's line that
        built each object."""
        sites = self._sites

        def wrapped(obj: Any, *args: Any, **kwargs: Any) -> None:
            init(obj, *args, **kwargs)
            try:
                if obj not in sites:
                    sites[obj] = user_frame()
            except TypeError:  # not weakly referable
                pass

        return wrapped

    def _iter_init(self, init: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        def wrapped(it: Any, loader: Any, *args: Any, **kwargs: Any) -> None:
            init(it, loader, *args, **kwargs)
            site = recorder._sites.get(loader)
            for info in recorder.loaders:
                if info["_ref"]() is loader:
                    return
            recorder.loaders.append(_loader_info(loader, site))

        return wrapped

    def _zero_grad(self, owner: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        def wrapped(obj: Any, set_to_none: bool = True) -> None:
            if not recorder.measuring:
                return fn(obj, set_to_none)
            site = user_frame()
            key = (site[0] if site else None, site[1] if site else None, bool(set_to_none))
            entry = recorder.zero_grads.get(key)
            if entry is None:
                entry = recorder.zero_grads[key] = ZeroGrad(bool(set_to_none), *key[:2], owner)
            start = time.perf_counter()
            try:
                return fn(obj, set_to_none)
            finally:
                entry.seconds += time.perf_counter() - start
                entry.calls += 1
                if not set_to_none:
                    entry.grad_bytes = _grad_bytes(obj)

        return wrapped

    # -- install and remove --------------------------------------------------------------

    def install(self) -> None:
        import torch
        from torch.optim import optimizer as optim_module
        from torch.utils.data import dataloader

        def patch(owner: Any, name: str, new: Any) -> None:
            old = owner.__dict__[name]
            setattr(owner, name, new)
            self._undo.append(lambda: setattr(owner, name, old))

        base_iter = dataloader._BaseDataLoaderIter
        patch(base_iter, "__next__", self._timed("data", base_iter.__next__))
        patch(base_iter, "__init__", self._iter_init(base_iter.__init__))
        patch(
            dataloader.DataLoader, "__init__", self._remember_site(dataloader.DataLoader.__init__)
        )
        opt_init = optim_module.Optimizer.__init__
        patch(optim_module.Optimizer, "__init__", self._remember_site(opt_init))
        patch(torch.autograd, "backward", self._timed("backward", torch.autograd.backward))
        opt_cls, mod_cls = optim_module.Optimizer, torch.nn.Module
        patch(opt_cls, "zero_grad", self._zero_grad("optimizer", opt_cls.zero_grad))
        patch(mod_cls, "zero_grad", self._zero_grad("module", mod_cls.zero_grad))
        for handle in (
            optim_module.register_optimizer_step_pre_hook(self._pre_step),
            optim_module.register_optimizer_step_post_hook(self._post_step),
        ):
            self._undo.append(handle.remove)

    def remove(self) -> None:
        while self._undo:
            self._undo.pop()()


def _loader_info(loader: Any, site: tuple[str, int] | None) -> dict[str, Any]:
    workers = int(loader.num_workers)
    return {
        "_ref": weakref.ref(loader),
        "num_workers": workers,
        "pin_memory": bool(loader.pin_memory),
        "persistent_workers": bool(loader.persistent_workers),
        "prefetch_factor": loader.prefetch_factor if workers else None,
        "batch_size": loader.batch_size,
        "dataset": type(loader.dataset).__name__,
        "path": site[0] if site else None,
        "line": site[1] if site else None,
    }


def _optimizer_info(optimizer: Any, site: tuple[str, int] | None) -> dict[str, Any]:
    defaults = getattr(optimizer, "defaults", {}) or {}
    tensors = [p for group in optimizer.param_groups for p in group["params"]]
    return {
        "id": id(optimizer),
        "class": type(optimizer).__name__,
        "foreach": defaults.get("foreach"),
        "fused": defaults.get("fused"),
        "tensors": len(tensors),
        "device": str(tensors[0].device.type) if tensors else None,
        "path": site[0] if site else None,
        "line": site[1] if site else None,
    }


def _grad_bytes(obj: Any) -> int:
    """The bytes of the gradients an optimizer or module holds."""
    if hasattr(obj, "param_groups"):
        params = [p for group in obj.param_groups for p in group["params"]]
    else:
        params = list(obj.parameters())
    return sum(p.grad.nbytes for p in params if getattr(p, "grad", None) is not None)


def _cuda_memory(step: Step) -> None:
    import torch

    step.allocated = torch.cuda.memory_allocated()
    step.peak_allocated = torch.cuda.max_memory_allocated()
    step.reserved = torch.cuda.memory_reserved()
    torch.cuda.reset_peak_memory_stats()


def public(info: dict[str, Any]) -> dict[str, Any]:
    """A loader's or optimizer's record without its private keys (for the report)."""
    return {k: v for k, v in info.items() if not k.startswith("_") and k != "id"}
