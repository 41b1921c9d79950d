"""Numbers as the reports write them: times, shares, sizes, FLOP counts."""

from __future__ import annotations


def seconds(value: float) -> str:
    """``0.0123`` -> ``12.3 ms``; ``2.5`` -> ``2.50 s``; ``4e-6`` -> ``4 µs``."""
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} µs"


def share(value: float | None) -> str:
    """``0.423`` -> ``42%``; below 1% with one decimal."""
    if value is None:
        return "–"
    pct = value * 100
    return f"{pct:.0f}%" if pct >= 1 else f"{pct:.1f}%"


def size(value: float) -> str:
    """Bytes in binary units: ``1536`` -> ``1.5 KiB``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def count(value: float) -> str:
    """A per-step count: ``3.0`` -> ``3``, ``0.5`` -> ``0.5``."""
    return f"{value:.0f}" if value == int(value) else f"{value:.2g}"


def flops(value: float) -> str:
    """``1.2e12`` -> ``1.2 T``."""
    for unit, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} "
