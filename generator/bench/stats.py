"""Statistics and verdicts of the benchmarks: pure functions on plain numbers, no torch.

The benchmark times the before and the after form in ``n`` interleaved replicates. Each
replicate gives one median per form; the speed-up of a replicate is ``before / after``.
The reported ratio is the median of the replicate ratios, and its interval is their
minimum and maximum: for ``n`` independent replicates that interval holds the true median
ratio with probability ``1 - 2**(1 - n)`` (94 % for 5 replicates, 98 % for 7), with no
assumption about the shape of the noise. The verdict is read off the interval, never off
the median alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

#: Relative differences smaller than this are never called significant: timing noise on a
#: shared machine drifts by a few percent between runs even when the interval is tight.
TOLERANCE = 0.03

#: "No difference" needs the median ratio within this factor of 1 as well as an interval
#: that crosses 1: a median of 2.21x with an interval of 0.73x-2.42x is no evidence of "no
#: difference", only of replicates that disagree (``inconclusive``).
EQUIVALENCE = 1.25

TimeVerdict = Literal["faster", "slower", "no-difference", "inconclusive"]
MemoryVerdict = Literal["less-memory", "more-memory", "no-difference"]


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0 ≤ q ≤ 1) of ``values``, linearly interpolated (numpy's default).

    Raises:
        ValueError: ``values`` is empty or ``q`` is outside [0, 1].
    """
    if not values:
        raise ValueError("no values")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q}")
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    """The median of ``values``."""
    return quantile(values, 0.5)


@dataclass(frozen=True)
class Summary:
    """Median and spread of one form's times (seconds per run)."""

    median: float
    q1: float
    q3: float
    min: float
    max: float
    n: int

    @property
    def iqr(self) -> float:
        """Interquartile range ``q3 - q1``."""
        return self.q3 - self.q1


def summarize(values: Sequence[float]) -> Summary:
    """Median, quartiles, minimum and maximum of ``values``."""
    return Summary(
        median=median(values),
        q1=quantile(values, 0.25),
        q3=quantile(values, 0.75),
        min=min(values),
        max=max(values),
        n=len(values),
    )


@dataclass(frozen=True)
class Ratio:
    """A ratio ``before / after`` (above 1: the after form is faster or smaller) and its interval."""

    value: float
    low: float
    high: float


def replicate_ratios(before: Sequence[float], after: Sequence[float]) -> list[float]:
    """``before[i] / after[i]`` for each pair of replicate medians.

    Raises:
        ValueError: the sequences differ in length, are empty, or hold a non-positive time.
    """
    if len(before) != len(after) or not before:
        raise ValueError("need the same, non-zero number of before and after replicates")
    if min(before) <= 0 or min(after) <= 0:
        raise ValueError("times must be positive")
    return [b / a for b, a in zip(before, after, strict=True)]


def speedup(before: Sequence[float], after: Sequence[float]) -> Ratio:
    """The speed-up of the after form from paired replicate medians: median and min–max."""
    ratios = replicate_ratios(before, after)
    return Ratio(value=median(ratios), low=min(ratios), high=max(ratios))


def coverage(replicates: int) -> float:
    """Probability that the min–max interval of ``replicates`` ratios holds the true median."""
    return 1.0 - 2.0 ** (1 - replicates) if replicates > 1 else 0.0


def time_verdict(ratio: Ratio, tolerance: float = TOLERANCE) -> TimeVerdict:
    """``faster`` when the whole interval lies above ``1 + tolerance``, ``slower`` when it lies
    below ``1 / (1 + tolerance)``; when the interval crosses that band, ``no-difference`` if
    the median lies within `EQUIVALENCE` of 1, else ``inconclusive``.

    Why the last case: on a shared machine one replicate of five can be disturbed (the
    ``freeze-layers`` benchmark measured replicate speed-ups of 2.42, 2.33, 2.21, 2.05 and
    0.73, its after form 4.3 ms in the last replicate against 1.2-2.1 ms in the others). The
    min-max interval then crosses 1 and the claim is not shown, but a median of 2.21x is not
    "no difference": the replicates disagree, and the tip needs measuring again.
    """
    if ratio.low > 1.0 + tolerance:
        return "faster"
    if ratio.high < 1.0 / (1.0 + tolerance):
        return "slower"
    if 1.0 / EQUIVALENCE <= ratio.value <= EQUIVALENCE:
        return "no-difference"
    return "inconclusive"


def memory_ratio(before_bytes: int, after_bytes: int) -> float:
    """``before / after`` bytes; infinite when the after form holds nothing, 1 when neither does."""
    if before_bytes < 0 or after_bytes < 0:
        raise ValueError("byte counts must not be negative")
    if after_bytes == 0:
        return 1.0 if before_bytes == 0 else math.inf
    return before_bytes / after_bytes


def memory_verdict(
    before_bytes: int, after_bytes: int, tolerance: float = TOLERANCE
) -> MemoryVerdict:
    """``less-memory`` / ``more-memory`` when the byte counts differ by more than ``tolerance``.

    Byte counts are exact (tensor sizes), so there is no interval to read.
    """
    ratio = memory_ratio(before_bytes, after_bytes)
    if ratio > 1.0 + tolerance:
        return "less-memory"
    if ratio < 1.0 / (1.0 + tolerance):
        return "more-memory"
    return "no-difference"
