"""Helpers that bench code can call (`tensor_bytes`, `saved_tensor_bytes`, ``peak_bytes``):
bytes of tensors, of what autograd saves, and the peak memory of a statement on each device.

torch is imported inside the functions, so importing this module is cheap.
"""

from __future__ import annotations

import functools
import gc
import sys
from collections.abc import Callable
from contextlib import suppress
from typing import Any


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


def glibc_returns_freed_memory() -> None:
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
            glibc_returns_freed_memory()
        results = []
        for _ in range(repeat):
            gc.collect()
            results.append(peak_cuda(fn) if device == "cuda" else peak_cpu(fn))
        return min(results)

    return peak_bytes
