"""What ``torch.compile`` did during the run: graph breaks and recompilations, with reasons.

Read once at the end from TorchDynamo's own records (``torch._dynamo.utils``: the
``graph_break`` counter and its reasons with the user's stack, and the compilation metrics,
each with its recompilation reason and compile time); nothing is hooked. Nothing is read,
and ``torch._dynamo`` is not imported, when the script never compiled. The records are
global to the process: those that were there before the run (`before`) are left out.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from generator.doctor.frames import display, is_user_file


@dataclass
class Break:
    """One graph break: why, where in the user's code, and how many times it was met."""

    reason: str
    path: str | None
    line: int | None
    count: int = 1


@dataclass
class Recompile:
    """One recompilation: the function, the guard that failed, its compile time."""

    function: str
    path: str | None
    line: int | None
    reason: str
    seconds: float
    start: float


@dataclass
class CompileRecord:
    """Everything the run compiled."""

    breaks: list[Break] = field(default_factory=list)
    recompiles: list[Recompile] = field(default_factory=list)
    compile_s: float = 0.0
    frames: int = 0


def _short(reason: str) -> str:
    """A reason's first line, with Dynamo's ``Explanation:`` line where it gives one."""
    lines = [line.strip() for line in reason.strip().splitlines() if line.strip()]
    if not lines:
        return reason
    explanation = next((ln for ln in lines if ln.startswith("Explanation:")), None)
    head = lines[0].rstrip(":")
    if explanation:
        return f"{head}: {explanation.removeprefix('Explanation:').strip()}"
    return head


def _records() -> tuple[list[Any], list[Any]] | None:
    """TorchDynamo's compilation metrics and graph break reasons so far; None when
    ``torch._dynamo`` was never imported (or its private API changed)."""
    utils = sys.modules.get("torch._dynamo.utils")
    if utils is None:
        return None
    try:
        metrics = list(utils.get_compilation_metrics())
        return metrics, list(getattr(utils, "graph_break_reasons", []))
    except Exception:  # a private API that changed: report no compile findings
        return None


def before() -> list[Any]:
    """The records already there as a run starts (held, so that their ids stay theirs)."""
    records = _records()
    return [*records[0], *records[1]] if records is not None else []


def record(earlier: list[Any] | None = None) -> CompileRecord | None:
    """The run's compilations, less the records in ``earlier`` (`before`); None when the
    script never used ``torch.compile``."""
    records = _records()
    if records is None:
        return None
    seen = {id(item) for item in earlier or []}
    metrics = [m for m in records[0] if id(m) not in seen]
    reasons = [r for r in records[1] if id(r) not in seen]
    out = CompileRecord()
    by_key: dict[tuple[str, str | None, int | None], Break] = {}
    for item in reasons:
        where = next(
            (
                (display(f.filename), f.lineno)
                for f in reversed(getattr(item, "user_stack", []) or [])
                if is_user_file(f.filename)
            ),
            (None, None),
        )
        key = (_short(str(item.reason)), *where)
        if key in by_key:
            by_key[key].count += 1
        else:
            by_key[key] = Break(key[0], where[0], where[1])
    out.breaks = list(by_key.values())
    for m in metrics:
        seconds = float(m.entire_frame_compile_time_s or 0.0)
        out.compile_s += seconds
        out.frames += 1
        if m.recompile_reason and not str(m.co_name).startswith("torch_dynamo_resume"):
            path = display(m.co_filename) if m.co_filename else None
            out.recompiles.append(
                Recompile(
                    str(m.co_name),
                    path,
                    m.co_firstlineno,
                    _short(str(m.recompile_reason)),
                    seconds,
                    float(m.start_time or 0.0),
                )
            )
    return out
