"""The tip record schema: one pydantic model, exported as ``tips/schema.json``.

Unknown keys are errors everywhere (``extra="forbid"``) and every field carries a
description, which editors show as a tooltip once the YAML file points at the schema.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from generator.records.benchspec import Bench
from generator.records.fields import (
    Category,
    Device,
    Feature,
    Impact,
    Line,
    PythonCode,
    Source,
    Strict,
    Tag,
    Text,
    TipId,
)

__all__ = ["Bench", "Hardware", "Launch", "Tip", "Variant", "json_schema"]

#: A part of a composer feature's block: ``<feature>.<part>`` (``always.load``).
_BLOCK = r"^[a-z0-9]+(?:-[a-z0-9]+)*\.[a-z0-9]+(?:-[a-z0-9]+)*$"


class Hardware(Strict):
    """Where the tip applies, where the harness runs it, and where its benefit shows."""

    devices: list[Device] = Field(
        min_length=1,
        description="Devices the snippets run on and are tested on: cpu, cuda, multi-gpu. "
        "A tip without `cpu` is skipped on CPU-only machines, with `notes` as the reason.",
    )
    min_compute_capability: float | None = Field(
        default=None,
        ge=3.0,
        description="Lowest CUDA compute capability where the tip pays off (8.0 for bf16, TF32).",
    )
    helps_on: list[Device] = Field(
        min_length=1,
        description="Where the tip pays off, as opposed to where it is tested (`devices`): "
        "TF32 and cudnn.benchmark run on a CPU but help only on a CUDA GPU (`[cuda]`); DDP "
        "tuning helps on `multi-gpu`. Shown as the 'helps on' badges.",
    )
    notes: Text | None = Field(
        default=None,
        description="Where the benefit appears and where it does not (e.g. 'speed-up on Tensor "
        "Core GPUs only'). Required when `devices` lacks cpu.",
    )

    @field_validator("devices", "helps_on")
    @classmethod
    def _unique_devices(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("has duplicate entries")
        return value

    @model_validator(mode="after")
    def _notes_when_not_cpu(self) -> Hardware:
        if "cpu" not in self.devices and self.notes is None:
            raise ValueError("notes are required when devices lacks cpu (they are the skip reason)")
        return self


_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


class Launch(Strict):
    """Run the snippet as the script every rank of a `torchrun` job runs."""

    nproc: int = Field(
        ge=2,
        le=8,
        description="Processes (ranks) to start: the snippet is launched with `torchrun "
        "--standalone --nproc_per_node <nproc>` on CPU with gloo in the tests. `checks` run in "
        "every rank right after the snippet, in its namespace, with the process group still up "
        "(the snippet's `destroy_process_group` is deferred until the checks ran), so they can "
        "compare ranks with collectives such as `dist.all_gather_object`.",
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Environment variables of the job, shown in front of the torchrun command "
        "(e.g. {TORCH_DISTRIBUTED_DEBUG: DETAIL}).",
    )
    expect: Literal["success", "error", "hang"] = Field(
        default="success",
        description="How the job ends: `success` (every rank exits 0), `error` (a rank raises and "
        "torchrun stops the job with a non-zero exit; the checks of a rank run with the "
        "exception as `error`, or `None` where it raised nothing), or `hang` (the job is still "
        "running `hang_s` seconds after every rank started the snippet; the checks then run in "
        "every rank, in a thread, on the namespace as far as the snippet got, and the harness "
        "kills the job).",
    )
    hang_s: float | None = Field(
        default=None,
        gt=0,
        le=60,
        description="With `expect: hang`: how long the job must keep running after every rank "
        "started the snippet.",
    )
    torchrun: bool = Field(
        default=False,
        description="Start the job with torchrun itself. By default the tests start the ranks "
        "as `torchrun --standalone` does (its environment, a session per rank, every rank "
        "stopped when one fails) from one import of torch, a third of torchrun's cost; a tip "
        "whose subject is torchrun's own behaviour (signals to the launcher, restarts) sets this.",
    )
    checks: PythonCode | None = Field(
        default=None,
        description="Python run once after the job ended, in a fresh process in the job's working "
        "directory, to assert what no single rank can see: `workdir` (a Path, the job's working "
        "directory, where the ranks wrote their files), `outputs` (each rank's stdout and "
        "stderr, by rank), `exit_code` (torchrun's; None when the harness stopped a hanging job) "
        "and `elapsed_s` (wall time of the job).",
    )

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not _ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not an environment variable name (A-Z, 0-9, _)")
        return value

    @field_validator("checks")
    @classmethod
    def _normalise(cls, value: str | None) -> str | None:
        return None if value is None else value.strip("\n") + "\n"

    @model_validator(mode="after")
    def _hang_time(self) -> Launch:
        if (self.expect == "hang") != (self.hang_s is not None):
            raise ValueError("give hang_s with expect: hang, and only then")
        return self

    def command(self, script: str) -> str:
        """The shell command that runs ``script`` the way the tests do."""
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        run = f"torchrun --standalone --nproc_per_node {self.nproc} {script}"
        return f"{env} {run}" if env else run


class Variant(Strict):
    """One runnable snippet (the `before` or the `after` form) and the checks of its claim."""

    code: PythonCode = Field(
        description="Self-contained, runnable Python: imports included, tiny sizes, seconds on a "
        "2-core CPU. Use `device = 'cuda' if torch.cuda.is_available() else 'cpu'` where it helps."
    )
    explain: Text | None = Field(default=None, description="What this code does, and why.")
    checks: PythonCode | None = Field(
        default=None,
        description="Python run after `code` in the same namespace; `assert`s the tip's claim "
        "(e.g. the stored loss has no grad_fn). Must be able to fail. With `launch`, they run in "
        "every rank.",
    )
    no_checks: Text | None = Field(
        default=None,
        description="Why the claim cannot be asserted here (e.g. a speed-up that only a GPU shows). "
        "Give either `checks` or `no_checks` for the `after` form.",
    )
    probe: PythonCode | None = Field(
        default=None,
        description="Check-only Python run just before `code`, in the same namespace (in every "
        "rank with `launch`): what the checks need to see inside the run, such as a memory "
        "baseline or a hook that records an intermediate state. Never shown to readers; keep it "
        "small and leave the snippet's behaviour unchanged. Needs checks that read it.",
    )
    launch: Launch | None = Field(
        default=None,
        description="Set when `code` is the script each rank of a distributed job runs: the "
        "harness starts it with `torchrun --standalone --nproc_per_node <nproc>` and the tip "
        "page shows that command beside the code. The snippet stays a plain script (no launcher "
        "inside it).",
    )

    @field_validator("code", "checks", "probe")
    @classmethod
    def _normalise(cls, value: str | None) -> str | None:
        # Syntax is checked by generator.records.load, which can point at the exact file line.
        return None if value is None else value.strip("\n") + "\n"

    @model_validator(mode="after")
    def _checks_xor_reason(self) -> Variant:
        if self.probe is not None and not self.has_checks():
            raise ValueError("a probe needs checks that read it")
        checked = self.checks is not None or (self.launch is not None and self.launch.checks)
        if checked and self.no_checks is not None:
            raise ValueError("give either checks or no_checks, not both")
        return self

    def has_checks(self) -> bool:
        """Whether anything asserts this variant's claim (in the ranks or after the job)."""
        return self.checks is not None or bool(self.launch and self.launch.checks)


class Tip(Strict):
    """One PyTorch training tip: the single source of its page, snippets and tests."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        json_schema_extra={"$schema": "https://json-schema.org/draft/2020-12/schema"},
    )

    id: TipId | None = Field(
        default=None, description="Optional; when present it must equal the file name stem."
    )
    category: Category = Field(description="The one category the tip is filed under.")
    tags: list[Tag] = Field(min_length=1, description="Search and index tags, from the fixed list.")
    impact: list[Impact] = Field(min_length=1, description="What the tip improves.")
    title: Line = Field(
        description="Short imperative title, e.g. 'Zero gradients by setting them to None'."
    )
    summary: Line = Field(description="One line: the advice and its payoff.")
    rationale: Text = Field(
        description="Markdown: why it works, with the mechanism, not just the claim."
    )
    hardware: Hardware = Field(
        description="Devices, compute capability and where the benefit shows."
    )
    caveats: list[Text] = Field(
        default_factory=list, description="When the tip hurts, what breaks, numerical differences."
    )
    before: Variant | None = Field(default=None, description="The common mistake or the slow form.")
    after: Variant | None = Field(default=None, description="The recommended form.")
    no_code: Text | None = Field(
        default=None,
        description="For advice-only tips (rare): why there is no code. Excludes before/after.",
    )
    sources: list[Source] = Field(
        min_length=1, description="Seed documents and documentation pages."
    )
    min_torch: Annotated[str, StringConstraints(pattern=r"^\d+\.\d+$")] | None = Field(
        default=None, description="Oldest torch version (major.minor) the after code needs."
    )
    related: list[TipId] = Field(default_factory=list, description="Ids of related tips.")
    compose: Feature | None = Field(
        default=None,
        description="Composer feature applying this tip in a generated train.py "
        "(`always` for practices every script follows).",
    )
    compose_block: Annotated[str, StringConstraints(pattern=_BLOCK)] | None = Field(
        default=None,
        description="The part of the composed script that cites this tip: a template block "
        '`<compose>.<part>` (`cite("always.load")` in generator/templates/compose). '
        'Without it, the tip is cited in the feature\'s main block(s), `cite("<compose>")`.',
    )
    bench: Bench | None = Field(
        default=None,
        description="How `python -m generator bench` measures the claim (speed and memory tips).",
    )
    lint: list[Annotated[str, StringConstraints(pattern=r"^PTT\d{3}$")]] = Field(
        default_factory=list,
        description="Codes of the `python -m generator lint` rules that enforce this tip "
        "(PTTnnn). Each must name a rule whose tip is this one, and every rule's tip must "
        "list its code: `validate` checks both.",
    )

    @field_validator("tags", "impact", "related", "caveats", "lint")
    @classmethod
    def _unique(cls, value: list[Any]) -> list[Any]:
        if len(set(map(str, value))) != len(value):
            raise ValueError("has duplicate entries")
        return value

    @model_validator(mode="after")
    def _code_shape(self) -> Tip:
        if self.no_code is not None:
            if self.before is not None or self.after is not None:
                raise ValueError("no_code excludes before and after")
            return self
        if self.after is None:
            raise ValueError("give `after` code, or `no_code` with the reason there is none")
        if not self.after.has_checks() and self.after.no_checks is None:
            raise ValueError("after needs `checks` (asserting the claim) or `no_checks` (why not)")
        return self

    @field_validator("compose_block", mode="before")
    @classmethod
    def _compose_block_of_feature(cls, block: Any, info: ValidationInfo) -> Any:
        if not isinstance(block, str):
            return block  # the field's type says what is wrong
        if not re.fullmatch(_BLOCK, block):
            raise ValueError(
                f"{block!r} is not a part of a feature's block: write <feature>.<part>, as in "
                "always.load (leave compose_block out to cite in the feature's main block)"
            )
        compose = info.data.get("compose")
        if not block.startswith(f"{compose}."):
            raise ValueError(
                f"{block!r} is a block of the feature {block.split('.')[0]!r}, "
                + (
                    f"not of the tip's compose {compose!r}"
                    if compose
                    else "and compose is not given"
                )
            )
        return block

    @model_validator(mode="after")
    def _bench_devices(self) -> Tip:
        if self.bench is None and {"speed", "memory"} & set(self.impact):
            raise ValueError(
                "a speed or memory tip needs a `bench` section (the workload `python -m "
                "generator bench` measures, or bench.not_measurable with the reason)"
            )
        if self.bench is not None:
            for device in self.bench.measured_devices():
                if device not in self.hardware.devices:
                    raise ValueError(
                        f"bench: the tip does not run on {device}: "
                        f"list {device} in bench.not_measurable"
                    )
        return self

    def variants(self) -> dict[str, Variant]:
        """The snippets of this tip by name (``before``/``after``), in that order."""
        return {k: v for k, v in (("before", self.before), ("after", self.after)) if v is not None}


def json_schema() -> str:
    """Return the JSON Schema of a tip record, as the text written to ``tips/schema.json``."""
    schema = Tip.model_json_schema()
    schema["title"] = "PyTorch tip record"
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
