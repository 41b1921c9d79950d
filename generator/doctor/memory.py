"""Memory over the measured steps, from the profiler's allocation events.

Each allocation and free of the window carries the allocator's running total, so the bytes
allocated at the end of each step, the peak within it, and the allocations that are never
freed are exact (tensor memory; the autograd graph's own nodes are not tensors and are not
counted). A *leak site* is a line of the user's code whose allocations survive from every
measured step but the last (the last step's tensors are still in use when the window
ends). Its surviving tensors are then looked up (``gc``): whether they hold an autograd
graph (``grad_fn``), and which of the script's containers holds them, named by variable and
by the line that adds to it.
"""

from __future__ import annotations

import ast
import bisect
import gc
import sys
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from generator.doctor.frames import display, is_user_file, resolve
from generator.doctor.stacks import user_line
from generator.doctor.trace import Alloc, Facts


@dataclass
class StepMemory:
    """Bytes allocated at the end of each measured step and the peak within it."""

    end: list[int] = field(default_factory=list)
    peak: list[int] = field(default_factory=list)
    reserved: list[int] = field(default_factory=list)


@dataclass
class LeakSite:
    """Allocations of one user line that outlive their step, in every measured step."""

    path: str
    line: int
    count: int
    nbytes: int
    steps: int
    grad_fn: str | None = None
    holder: str | None = None
    holder_path: str | None = None
    holder_line: int | None = None
    ptrs: set[int] = field(default_factory=set, repr=False)


def per_step(facts: Facts, device: str) -> StepMemory:
    """The allocated bytes at the end of each step, and the peak within each step."""
    out = StepMemory()
    allocs = [a for a in facts.allocs if a.device == device]
    times = [a.t for a in allocs]
    for lo, hi in zip(facts.marks, facts.marks[1:], strict=False):
        first = bisect.bisect_left(times, lo)
        last = bisect.bisect_right(times, hi)
        inside = allocs[first:last]
        before = allocs[first - 1].total if first else None
        end = inside[-1].total if inside else before
        if end is None:
            continue
        out.end.append(end)
        out.peak.append(max([a.total for a in inside] + ([before] if before is not None else [])))
        out.reserved.append(inside[-1].reserved if inside else allocs[first - 1].reserved)
    return out


def slope(values: list[int]) -> float:
    """The least-squares growth per step of ``values``."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x, mean_y = (n - 1) / 2, sum(values) / n
    num = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    den = sum((i - mean_x) ** 2 for i in range(n))
    return num / den


def leak_sites(facts: Facts, device: str) -> list[LeakSite]:
    """The user lines whose allocations survive from every measured step but the last."""
    steps = len(facts.marks) - 1
    if steps < 3:
        return []
    live: dict[int, Alloc] = {}
    for a in facts.allocs:
        if a.device != device:
            continue
        if a.size > 0:
            live[a.ptr] = a
        elif a.size < 0:
            live.pop(a.ptr, None)
    by_site: dict[tuple[str, int], list[tuple[int, Alloc]]] = {}
    last_start = facts.marks[-2]
    for a in live.values():
        if not facts.marks[0] <= a.t < last_start:
            continue
        where = user_line(a.event)
        if where is not None:
            step = bisect.bisect_right(facts.marks, a.t) - 1
            by_site.setdefault(where, []).append((step, a))
    sites = []
    for (path, line), items in by_site.items():
        if len({s for s, _ in items}) >= steps - 1:
            nbytes = sum(a.size for _, a in items)
            ptrs = {a.ptr for _, a in items}
            sites.append(LeakSite(path, line, len(items), nbytes, steps - 1, ptrs=ptrs))
    return sorted(sites, key=lambda s: -s.nbytes)


def explain(site: LeakSite, frames: Iterable[Mapping[str, Any]]) -> None:
    """Find the surviving tensors of ``site``: set its ``grad_fn`` (the graph they hold)
    and the container that holds them (``holder``, and the line that adds to it)."""
    import torch

    ptrs = site.ptrs
    found = []
    for obj in gc.get_objects():
        if issubclass(type(obj), torch.Tensor):  # type(): no attribute of obj is read
            try:
                if obj.untyped_storage().data_ptr() in ptrs:
                    found.append(obj)
            except (RuntimeError, NotImplementedError):
                continue
    for tensor in found:
        if tensor.grad_fn is not None:
            site.grad_fn = type(tensor.grad_fn).__name__
            break
    containers = {
        id(ref): ref
        for tensor in found[:20]
        for ref in gc.get_referrers(tensor)
        if isinstance(ref, list | dict | set | deque) and not _is_namespace(ref)
    }
    for scope in frames:
        for name, value in scope.items():
            if id(value) in containers:
                site.holder = name
                origin = scope.get("__file__") if "__file__" in scope else None
                where = _adding_line(name, origin or site.path)
                if where is not None:
                    site.holder_path, site.holder_line = where
                return


def _is_namespace(obj: object) -> bool:
    return isinstance(obj, dict) and bool({"__name__", "__builtins__", "__file__"} & obj.keys())


def user_scopes(frame: FrameType | None = None) -> list[dict[str, Any]]:
    """The local and global namespaces of the user's frames on the current stack, innermost
    first, each with its file as ``__file__``."""
    frame = frame or sys._getframe(1)
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    while frame is not None:
        name = frame.f_code.co_filename
        if is_user_file(name):
            for scope in (frame.f_locals, frame.f_globals):
                if id(scope) not in seen:
                    seen.add(id(scope))
                    out.append({**scope, "__file__": name})
        frame = frame.f_back
    return out


_ADDS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft"})


def _adding_line(name: str, path: str) -> tuple[str, int] | None:
    """The first line of ``path`` that adds to the container ``name``
    (``name.append(...)``, ``name[k] = ...``, ``name += ...``)."""
    real = resolve(path)
    if real is None:
        return None
    try:
        with open(real, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt | ast.expr):
            continue
        target: ast.AST | None = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _ADDS:
                target = node.func.value
        elif isinstance(node, ast.AugAssign):
            target = node.target
        elif isinstance(node, ast.Assign):
            target = next((t.value for t in node.targets if isinstance(t, ast.Subscript)), None)
        if isinstance(target, ast.Name) and target.id == name:
            lines.append(node.lineno)
    return (display(real), min(lines)) if lines else None
