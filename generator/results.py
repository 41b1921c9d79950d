"""Benchmark results files: ``benchmarks/results/<device>.json``, one per device class.

A results file says where and when it was measured (:class:`Environment`), how
(:class:`Settings`) and, per tip, the times and bytes of both forms with the ratio, its
interval and the verdict. It is written by ``python -m generator bench`` only: no figure
in it is typed by hand.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from generator import paths
from generator.errors import UserError
from generator.schema import Tip
from generator.stats import MemoryVerdict, TimeVerdict

RESULTS_DIR = paths.ROOT / "benchmarks" / "results"
SCHEMA_VERSION = 1
ResultDevice = Literal["cpu", "cuda"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Environment(_Model):
    """The hardware and software a results file was measured on."""

    cpu_model: str = Field(description="CPU model name, as /proc/cpuinfo or the OS reports it.")
    cpu_arch: str = Field(description="Machine architecture, e.g. x86_64.")
    cpu_cores: int = Field(ge=1, description="Logical CPU cores the process may use.")
    cpu_capability: str | None = Field(
        default=None, description="Vector ISA PyTorch dispatches to (e.g. AVX512)."
    )
    gpu_name: str | None = Field(default=None, description="GPU name, on CUDA runs.")
    gpu_compute_capability: str | None = Field(
        default=None, description="CUDA compute capability, e.g. 9.0."
    )
    torch: str = Field(description="torch.__version__.")
    cuda: str | None = Field(default=None, description="torch.version.cuda, on CUDA runs.")
    python: str = Field(description="Python version.")
    platform: str = Field(description="Operating system, as platform.platform() reports it.")
    num_threads: int = Field(ge=1, description="torch intra-op threads used while timing.")
    date: str = Field(description="UTC date and time of the run, ISO 8601.")

    def machine(self) -> tuple[object, ...]:
        """What must match for results of two runs to sit in one file."""
        return (
            self.cpu_model,
            self.cpu_cores,
            self.gpu_name,
            self.torch,
            self.num_threads,
        )


class Settings(_Model):
    """How the run measured."""

    quick: bool = Field(description="Whether --quick was given (shorter timing per replicate).")
    replicates: int = Field(ge=1, description="Interleaved replicates per form.")
    min_run_time_s: float = Field(gt=0, description="blocked_autorange min_run_time per replicate.")
    tolerance: float = Field(ge=0, description="Relative difference never called significant.")


class FormTime(_Model):
    """Times of one form, in seconds per run of the statement."""

    median_s: float = Field(description="Median over every timed block of every replicate.")
    q1_s: float = Field(description="First quartile over every block.")
    q3_s: float = Field(description="Third quartile over every block.")
    min_s: float = Field(description="Fastest block.")
    max_s: float = Field(description="Slowest block.")
    replicate_medians_s: list[float] = Field(description="Median of each replicate, in order.")
    blocks: int = Field(ge=1, description="Timed blocks over all replicates.")
    runs_per_block: list[int] = Field(description="Statement runs per block, per replicate.")


class TimeResult(_Model):
    """Before vs after in time."""

    before: FormTime
    after: FormTime
    ratio: float = Field(description="Median of replicate speed-ups before/after (>1: faster).")
    low: float = Field(description="Smallest replicate speed-up.")
    high: float = Field(description="Largest replicate speed-up.")
    verdict: TimeVerdict


class MemoryResult(_Model):
    """Before vs after in bytes."""

    before_bytes: int = Field(ge=0, description="Bytes of the before form (bench.memory.before).")
    after_bytes: int = Field(ge=0, description="Bytes of the after form (bench.memory.after).")
    ratio: float | None = Field(
        description="before/after bytes (>1: after holds less); null when after holds none."
    )
    verdict: MemoryVerdict


class TipResult(_Model):
    """One tip measured on one device."""

    kind: Literal["time", "memory"] = Field(description="The claim the verdict is about.")
    code: str = Field(description="Hash of the bench code measured (see code_hash).")
    measured_at: str = Field(description="UTC date and time, ISO 8601.")
    time: TimeResult | None = None
    memory: MemoryResult | None = None
    error: str | None = Field(default=None, description="Why the measurement failed, if it did.")

    def verdict(self) -> str | None:
        """The verdict on the tip's claim: of ``memory`` for memory tips, else of ``time``."""
        part = self.memory if self.kind == "memory" else self.time
        return None if part is None else part.verdict


class ResultsFile(_Model):
    """A whole results file."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_extra={"title": "Benchmark results"}
    )

    schema_version: Literal[1] = Field(description="Version of this file format.")
    device: ResultDevice = Field(description="Device class measured: cpu or cuda.")
    environment: Environment
    settings: Settings
    results: dict[str, TipResult] = Field(description="Results by tip id.")


def code_hash(tip: Tip) -> str:
    """A short hash of a tip's bench code: a result whose hash differs is stale."""
    assert tip.bench is not None
    bench = tip.bench
    parts = [bench.kind, bench.setup or "", bench.before or "", bench.after or ""]
    if bench.memory is not None:
        parts += [bench.memory.before, bench.memory.after]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:12]


def results_path(device: str, folder: Path | None = None) -> Path:
    """Where the results of ``device`` are committed."""
    return (folder or RESULTS_DIR) / f"{device}.json"


def dumps(results: ResultsFile) -> str:
    """The file content: stable, indented JSON with sorted tip ids."""
    data = results.model_dump(mode="json")
    data["results"] = dict(sorted(data["results"].items()))
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def read_results(path: Path) -> ResultsFile:
    """Read and validate a results file.

    Raises:
        UserError: the file is not valid JSON or does not match :class:`ResultsFile`.
    """
    try:
        return ResultsFile.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(file)"
        raise UserError(f"{path}: {where}: {first['msg']}") from None
    except OSError as err:
        raise UserError(f"cannot read {path}: {err.strerror}") from None


def load_all(folder: Path | None = None) -> dict[str, ResultsFile]:
    """The committed results by device (``cpu``, ``cuda``); a device never measured is absent."""
    out = {}
    for device in ("cpu", "cuda"):
        path = results_path(device, folder)
        if path.is_file():
            out[device] = read_results(path)
    return out


def merge(old: ResultsFile | None, new: ResultsFile, replace: bool) -> ResultsFile:
    """Combine a previous file and a new run.

    With ``replace`` (a run over every tip), the new run is the whole file. Otherwise the
    new results update the old ones, which must come from the same machine and software.

    Raises:
        UserError: a partial run on another machine than the file's.
    """
    if replace or old is None:
        return new
    same_machine = old.environment.machine() == new.environment.machine()
    if old.device != new.device or not same_machine or old.settings != new.settings:
        raise UserError(
            "the results file was measured on another machine, torch version or settings "
            "(--quick, --threads): run every tip (no IDS) to replace it, or pass --out"
        )
    return new.model_copy(update={"results": {**old.results, **new.results}})
