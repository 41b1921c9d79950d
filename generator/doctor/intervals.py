"""Lengths of time intervals, ``(start, end)`` in nanoseconds: their union within a window
and how long two sets of them overlap (GPU busy time, communication hidden by compute)."""

from __future__ import annotations


def union(intervals: list[tuple[int, int]], lo: int, hi: int) -> int:
    """The total length of ``intervals`` clipped to [lo, hi], overlaps counted once."""
    total, cursor = 0, lo
    for start, end in sorted(intervals):
        start, end = max(start, cursor), min(end, hi)
        if end > start:
            total += end - start
            cursor = end
    return total


def merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``intervals`` with the overlapping ones joined, sorted."""
    merged: list[list[int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """How long some interval of ``a`` runs while some interval of ``b`` runs."""
    merged = merge(b)
    total = 0
    for start, end in merge(a):
        for m_start, m_end in merged:
            if m_start >= end:
                break
            total += max(0, min(end, m_end) - max(start, m_start))
    return total
