"""The user's line behind a profiler event, from the Python frames the profiler recorded
(``with_stack``): each frame's caller names the file and line that made the call, so an op
reached through helper functions is traced back to the user's own code."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator.doctor.frames import display, is_user_file

if TYPE_CHECKING:
    from generator.doctor.trace import Sync


def user_line(event: Any, nearest_only: bool = False) -> tuple[str, int] | None:
    """The user's line that led to ``event``: the innermost Python frame in the user's
    files among its ancestors (``nearest_only``: only if the nearest Python frame is one)."""
    from torch._C._profiler import _EventType

    python = (_EventType.PyCall, _EventType.PyCCall)
    node = event.parent
    while node is not None:
        if node.tag == _EventType.PyCall:
            # ``event`` ran in this function's body, at a line the profiler does not record
            # (``if flag_tensor:`` calls no Python function): the line of its last call made
            # before ``event`` is that line, or the nearest one before it.
            before = [
                c
                for c in node.children
                if c.tag in python and c.start_time_ns <= event.start_time_ns
            ]
            if before:
                last = max(before, key=lambda c: c.start_time_ns).extra_fields.caller
                if is_user_file(last.file_name):
                    return display(last.file_name), int(last.line_number)
        if node.tag in python:
            caller = node.extra_fields.caller
            if is_user_file(caller.file_name):
                return display(caller.file_name), int(caller.line_number)
            if nearest_only:
                return None
        node = node.parent
    return None


def loading_data(event: Any) -> bool:
    """Whether ``event`` runs inside the DataLoader's machinery (a dataset's code)."""
    from torch._C._profiler import _EventType

    node = event.parent
    while node is not None:
        if node.tag == _EventType.PyCall and node.name.startswith("torch/utils/data/"):
            return True
        node = node.parent
    return False


def place(tree: Any, unplaced: list[tuple[Sync, int, int]]) -> None:
    """Give each runtime call the user's line running when it started: the innermost call
    from the user's code, on the same thread, around its start."""
    from torch._C._profiler import _EventType
    from torch.profiler._utils import traverse_dfs

    calls = [
        e
        for e in traverse_dfs(tree)
        if e.tag in (_EventType.PyCall, _EventType.PyCCall)
        and is_user_file(e.extra_fields.caller.file_name)
    ]
    for sync, tid, t in unplaced:
        around = [e for e in calls if e.start_tid == tid and e.start_time_ns <= t <= e.end_time_ns]
        if around:
            caller = max(around, key=lambda e: e.start_time_ns).extra_fields.caller
            sync.path, sync.line = display(caller.file_name), int(caller.line_number)


def ancestor_ids(event: Any) -> list[int]:
    out = []
    node = event.parent
    while node is not None:
        out.append(node.id)
        node = node.parent
    return out
