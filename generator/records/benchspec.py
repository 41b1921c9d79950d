"""The ``bench`` section of a record: what is measured (before/after statements, memory
expressions), at which sizes per device and regime, and the figures reported elsewhere."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from generator.records.fields import Line, PythonCode, Source, Strict, Text

BenchDevice = Literal["cpu", "cuda"]


class Reported(Strict):
    """A published figure for the tip, shown beside the measured one as "reported"."""

    figure: Line = Field(description="The figure as published, e.g. '3x faster training with AMP'.")
    hardware: Annotated[str, StringConstraints(min_length=1)] | Line | None = Field(
        default=None,
        description="The hardware it was measured on, as the source names it ('NVIDIA V100', "
        "'8x A100 80GB': product names, the same in both languages), or {en, zh} when it is "
        "words ('GPUs with Tensor Cores'); leave it out when the source does not say.",
    )
    source: Source = Field(description="Where the figure is published.")

    def hardware_in(self, lang: str) -> str | None:
        """The hardware in ``lang``: a product name as given, words in that language."""
        if isinstance(self.hardware, Line):
            return self.hardware.get(lang)
        return self.hardware


class NotMeasurable(Strict):
    """Devices where the benchmark cannot say anything about the tip's claim, and why."""

    devices: list[BenchDevice] = Field(
        min_length=1, description="Devices not measured: cpu, cuda (no duplicates)."
    )
    reason: Text = Field(
        description="Why a measurement there would not test the claim (e.g. 'TF32 exists on "
        "Ampere GPUs only'). Shown on the tip page instead of a figure."
    )

    @field_validator("devices")
    @classmethod
    def _unique_devices(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("has duplicate entries")
        return value


class BenchMemory(Strict):
    """Bytes each form holds: Python expressions evaluated once after the timed statement ran."""

    what: Line = Field(
        description="What the bytes are, e.g. 'activation memory saved for backward'."
    )
    before: PythonCode = Field(
        description="Expression giving the bytes of the before form, evaluated right after one "
        "more run of `bench.before`, in the namespace it left. Helpers: `tensor_bytes(*objs)` "
        "(tensors, modules, optimizers, containers), `saved_tensor_bytes(fn)` (activations saved "
        "for backward while `fn()` runs), `peak_bytes(fn)` (peak memory growth while `fn()` runs: "
        "CUDA allocator on GPU, resident set on CPU)."
    )
    after: PythonCode = Field(description="The same expression for the after form.")


#: Sizes become mandatory once every record declares them (the migration of issue 10).
REQUIRE_SIZES = True

SizeValue = int | float | bool | str
Regime = Literal["default", "launch-bound", "compute-bound"]
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")
#: Names the bench runner defines itself (generator.bench.runner.bench_namespace): not size names.
BENCH_PREDEFINED = frozenset(
    {"torch", "device", "tensor_bytes", "saved_tensor_bytes", "peak_bytes"}
)


class BenchSize(Strict):
    """One set of workload sizes: the names become variables of `bench.setup`."""

    regime: Regime = Field(
        default="default",
        description="What decides the time at these sizes: `launch-bound` (kernel launches and "
        "Python, a small step), `compute-bound` (the GPU's arithmetic or memory bandwidth), or "
        "`default` (one size only). Regime-dependent tips (autocast, channels_last, compile, "
        "cudnn.benchmark, CUDA graphs, fused optimizers) give both on cuda.",
    )
    values: dict[str, SizeValue] = Field(
        min_length=1,
        description="Variable name -> value, defined in the setup namespace before `setup` "
        "runs, e.g. {batch: 256, width: 1024}. Names are lowercase Python identifiers.",
    )

    @field_validator("values")
    @classmethod
    def _names(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name in value:
            if not _IDENTIFIER.match(name):
                raise ValueError(f"{name!r} is not a lowercase Python identifier")
            if name in BENCH_PREDEFINED:
                raise ValueError(f"{name!r} is predefined in the bench namespace: rename it")
        return value


class BenchSizes(Strict):
    """Workload sizes per device: small on CPU so CI stays fast, GPU-scale on CUDA."""

    cpu: list[BenchSize] | None = Field(
        default=None,
        min_length=1,
        description="Sizes on CPU: tiny, one statement well under 100 ms on a 2-core CPU.",
    )
    cuda: list[BenchSize] | None = Field(
        default=None,
        min_length=1,
        description="Sizes on a CUDA GPU: large enough that the GPU, not launch overhead, decides "
        "(the before form takes at least a few ms on an H100-class card). Give a launch-bound and "
        "a compute-bound entry where the effect depends on the regime.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> BenchSizes:
        names: set[str] | None = None
        for device in ("cpu", "cuda"):
            entries = getattr(self, device) or []
            regimes = [e.regime for e in entries]
            if len(set(regimes)) != len(regimes):
                raise ValueError(f"{device}: each regime may appear once")
            if len(entries) > 1 and "default" in regimes:
                raise ValueError(f"{device}: with several sizes, name each regime")
            for entry in entries:
                keys = set(entry.values)
                if names is None:
                    names = keys
                elif keys != names:
                    raise ValueError(
                        f"{device}: every size must define the same names "
                        f"({', '.join(sorted(names))}), got {', '.join(sorted(keys))}"
                    )
        return self

    def for_device(self, device: str) -> list[BenchSize]:
        """The sizes of ``device`` (an empty list when none are given)."""
        return list(getattr(self, device, None) or [])


class Bench(Strict):
    """How `python -m generator bench` measures the tip's claim: the workload and what is timed."""

    kind: Literal["time", "memory"] = Field(
        default="time",
        description="The claim the verdict is about: `time` (after runs faster) or `memory` "
        "(after holds fewer bytes; needs `memory`). Time is measured for both.",
    )
    workload: Line | None = Field(
        default=None,
        description="The workload in words, e.g. 'forward + backward of a 4-layer MLP, batch 64'.",
    )
    operation: Line | None = Field(
        default=None,
        description="Only for a micro-benchmark, whose timed statement is one operation rather "
        "than a training step, an epoch or a batch of the input pipeline: what one call does "
        "('one GC pass', 'one attention call'). Its ratio says little about a whole run, so the "
        "site shows it as a figure of its own ('one GC pass: 242 ms → 110 ns'), never on the "
        "step-speed chart.",
    )
    setup: PythonCode | None = Field(
        default=None,
        description="Python run once before timing; defines the objects the statements use. "
        "Sizes are tiny: one statement takes well under 100 ms on a 2-core CPU. `device` is "
        "predefined ('cpu' or 'cuda').",
    )
    sizes: BenchSizes | None = Field(
        default=None,
        description="Workload sizes per device (names defined before `setup` runs). Required "
        "for every measured device: CPU sizes keep CI fast, CUDA sizes keep the GPU busy.",
    )
    before: PythonCode | None = Field(
        default=None, description="Statement(s) timed for the before form (a call, a few lines)."
    )
    after: PythonCode | None = Field(
        default=None, description="Statement(s) timed for the after form."
    )
    memory: BenchMemory | None = Field(
        default=None, description="Bytes each form holds; required when kind is memory."
    )
    reported: list[Reported] = Field(
        default_factory=list,
        description="Published figures for the claim, with their hardware and source.",
    )
    not_measurable: NotMeasurable | None = Field(
        default=None, description="Devices where the claim cannot be measured, with the reason."
    )

    @field_validator("setup", "before", "after")
    @classmethod
    def _normalise(cls, value: str | None) -> str | None:
        return None if value is None else value.strip("\n") + "\n"

    @model_validator(mode="after")
    def _complete(self) -> Bench:
        skipped = set(self.not_measurable.devices) if self.not_measurable else set()
        measured = {"cpu", "cuda"} - skipped
        if measured and (self.before is None or self.after is None):
            raise ValueError(
                "give `before` and `after` statements, or list every device in not_measurable"
            )
        if self.kind == "memory" and measured and self.memory is None:
            raise ValueError("kind memory needs a `memory` section")
        for device in sorted(measured) if REQUIRE_SIZES else ():
            if self.sizes is None or not self.sizes.for_device(device):
                raise ValueError(
                    f"give bench.sizes.{device}: the workload sizes measured on {device} "
                    "(or list the device in not_measurable)"
                )
        return self

    def measured_devices(self) -> list[str]:
        """Devices the benchmark runs on (cpu, cuda) that are not marked not measurable."""
        skipped = set(self.not_measurable.devices) if self.not_measurable else set()
        return [d for d in ("cpu", "cuda") if d not in skipped]
