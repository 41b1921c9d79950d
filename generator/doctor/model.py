"""What a doctor's run measures and what it concludes: plain data, no torch.

`Measurement` is one process's figures (a rank's, under torchrun), filled in by
`generator.doctor.session`; `Finding` one conclusion; `Report` what the doctor prints,
in the JSON contract of `generator.doctor.report`.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

#: The phases of a step, in the order the reports show them.
PHASES = ("data", "forward", "backward", "optimizer", "other")

#: How each outcome of running the script reads in the report (``outcome``).
OUTCOMES = ("stopped", "finished", "exited", "raised", "no_steps", "warmup_only")

SEVERITIES = ("error", "warning", "info")


@dataclass
class Step:
    """One measured optimizer step: its wall time and its phases' (host wall-clock
    seconds), and the memory figures known at its end."""

    seconds: float
    phases: dict[str, float]
    allocated: int | None = None
    peak_allocated: int | None = None
    reserved: int | None = None


@dataclass
class Finding:
    """One finding: a measured one (``static`` false) or one of the lint's."""

    kind: str
    tip: str
    severity: str
    title: str
    evidence: str
    share: float | None = None
    path: str | None = None
    line: int | None = None
    static: bool = False
    rule: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The finding in the JSON contract (``kind`` and ``rule`` besides)."""
        return {
            "tip": self.tip,
            "severity": self.severity,
            "title": self.title,
            "evidence": self.evidence,
            "share": None if self.share is None else round(self.share, 6),
            "path": self.path,
            "line": self.line,
            "static": self.static,
            "kind": self.kind,
            "rule": self.rule,
        }


@dataclass
class ScriptError:
    """The script's own exception: type, message and the user's frame that raised it."""

    type: str
    message: str
    path: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = f" ({self.path}:{self.line})" if self.path else ""
        return f"{self.type}: {self.message}{where}" if self.message else f"{self.type}{where}"


@dataclass
class Measurement:
    """One process's figures over its measured steps, and what the detections found."""

    rank: int = 0
    world_size: int = 1
    device: str = "cpu"
    device_name: str = "CPU"
    outcome: str = "stopped"
    total_steps: int = 0  # optimizer steps of the whole run, warm-up included
    elapsed_s: float = 0.0  # the script's wall time, start to stop
    steps: list[Step] = field(default_factory=list)  # timed with the light hooks only
    profiled_steps: list[Step] = field(default_factory=list)  # then, under the profiler
    findings: list[Finding] = field(default_factory=list)
    peak_memory_bytes: int | None = None
    memory_capacity_bytes: int | None = None
    growth_bytes_per_step: float | None = None
    gpu_idle_s: float | None = None
    flops_per_step: float | None = None
    achieved_flops: float | None = None
    mfu: float | None = None
    dataloaders: list[dict[str, Any]] = field(default_factory=list)
    optimizers: list[dict[str, Any]] = field(default_factory=list)
    error: ScriptError | None = None
    exit_code: int | None = None
    notes: list[str] = field(default_factory=list)
    ranks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def step_time_s(self) -> float | None:
        """The median wall time of a measured step."""
        return statistics.median(s.seconds for s in self.steps) if self.steps else None

    @property
    def mean_step_s(self) -> float | None:
        return statistics.fmean(s.seconds for s in self.steps) if self.steps else None

    def breakdown(self) -> dict[str, float]:
        """Phase -> mean seconds per measured step (the phases add up to the mean step)."""
        if not self.steps:
            return {p: 0.0 for p in PHASES}
        return {p: statistics.fmean(s.phases.get(p, 0.0) for s in self.steps) for p in PHASES}

    def summary(self) -> dict[str, Any]:
        """The figures another rank sends rank 0 (`generator.doctor.ranks`)."""
        return {
            "rank": self.rank,
            "step_time_s": self.step_time_s,
            "breakdown": self.breakdown(),
            "peak_memory_bytes": self.peak_memory_bytes,
            "steps": len(self.steps),
        }
