"""Benchmark results files: ``benchmarks/results/<device>.json``, one per device class.

A results file says where and when it was measured (`Environment`), how
(`Settings`) and, per tip and per regime, the sizes used and the times and bytes of
both forms with the ratio, its interval and the verdict::

    {"schema_version": 2, "device": "cuda", "environment": {...}, "settings": {...},
     "results": {"channels-last": {"launch-bound": {"sizes": {"batch": 8, ...}, ...},
                                   "compute-bound": {"sizes": {"batch": 256, ...}, ...}}}}

A tip measured at one size (or without ``bench.sizes``) has one regime, ``default``. The
file is written by ``python -m generator bench`` only, after every tip, so an interrupted
run keeps what it measured: no figure in it is typed by hand.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from generator import paths
from generator.bench.stats import MemoryVerdict, Ratio, TimeVerdict, time_verdict
from generator.errors import UserError
from generator.records.benchspec import Regime, SizeValue
from generator.records.schema import Tip

RESULTS_DIR = paths.ROOT / "benchmarks" / "results"
#: 2: results per tip *and regime*, each with the sizes it was measured at (1: per tip).
SCHEMA_VERSION = 2
ResultDevice = Literal["cpu", "cuda"]
#: The order regimes are shown in: the small size first.
REGIME_ORDER: tuple[str, ...] = ("launch-bound", "default", "compute-bound")


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
    gpu_memory_bytes: int | None = Field(
        default=None, ge=0, description="Total memory of the GPU measured on, in bytes."
    )
    gpu_count: int | None = Field(
        default=None, ge=0, description="CUDA GPUs visible to the process (one is measured)."
    )
    gpu_driver: str | None = Field(
        default=None,
        description="NVIDIA driver version (from pynvml or nvidia-smi; null when neither is "
        "available).",
    )
    torch: str = Field(description="torch.__version__.")
    cuda: str | None = Field(default=None, description="torch.version.cuda, on CUDA runs.")
    cudnn: str | None = Field(
        default=None, description="torch.backends.cudnn.version(), on CUDA runs."
    )
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


#: The fields of a time result that make its ratio, in `Ratio`'s order.
RATIO = ("ratio", "low", "high")


class TimeResult(_Model):
    """Before vs after in time."""

    before: FormTime
    after: FormTime
    ratio: float = Field(description="Median of replicate speed-ups before/after (>1: faster).")
    low: float = Field(description="Smallest replicate speed-up.")
    high: float = Field(description="Largest replicate speed-up.")
    verdict: TimeVerdict

    @model_validator(mode="before")
    @classmethod
    def _current_verdict(cls, data: Any) -> Any:
        """The verdict follows today's rule (`generator.bench.stats.time_verdict`), also in
        files measured before it changed: it is a function of the ratio and its interval."""
        if isinstance(data, dict) and all(isinstance(data.get(k), float | int) for k in RATIO):
            data = {**data, "verdict": time_verdict(Ratio(*(float(data[k]) for k in RATIO)))}
        return data


class MemoryResult(_Model):
    """Before vs after in bytes."""

    before_bytes: int = Field(ge=0, description="Bytes of the before form (bench.memory.before).")
    after_bytes: int = Field(ge=0, description="Bytes of the after form (bench.memory.after).")
    ratio: float | None = Field(
        description="before/after bytes (>1: after holds less); null when after holds none."
    )
    verdict: MemoryVerdict


class TipResult(_Model):
    """One tip measured on one device at one size (one regime)."""

    kind: Literal["time", "memory"] = Field(description="The claim the verdict is about.")
    code: str = Field(
        description="Hash of the bench code and of the device's sizes measured (see code_hash)."
    )
    measured_at: str = Field(description="UTC date and time, ISO 8601.")
    sizes: dict[str, SizeValue] = Field(
        default_factory=dict,
        description="The names defined before bench.setup ran (the bench.sizes entry of this "
        "device and regime); empty for a bench without sizes.",
    )
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

    schema_version: Literal[2] = Field(description="Version of this file format.")
    device: ResultDevice = Field(description="Device class measured: cpu or cuda.")
    environment: Environment
    settings: Settings
    results: dict[str, dict[Regime, TipResult]] = Field(
        description="Results by tip id, then by regime (`default` for a tip with one size)."
    )

    def regimes(self, tip_id: str) -> list[tuple[str, TipResult]]:
        """The results of ``tip_id`` as (regime, result), small size first; empty if none."""
        found = self.results.get(tip_id, {})
        return sorted(found.items(), key=lambda item: REGIME_ORDER.index(item[0]))


def code_hash(tip: Tip, device: str) -> str:
    """A short hash of a tip's bench code and of its sizes on ``device``: a result whose hash
    differs is stale. A bench without sizes on ``device`` hashes its code only."""
    assert tip.bench is not None
    bench = tip.bench
    parts = [bench.kind, bench.setup or "", bench.before or "", bench.after or ""]
    if bench.memory is not None:
        parts += [bench.memory.before, bench.memory.after]
    sizes = bench.sizes.for_device(device) if bench.sizes is not None else []
    if sizes:
        parts.append(json.dumps([s.model_dump(mode="json") for s in sizes], sort_keys=True))
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:12]


def results_path(device: str, folder: Path | None = None) -> Path:
    """Where the results of ``device`` are committed."""
    return (folder or RESULTS_DIR) / f"{device}.json"


def dumps(results: ResultsFile) -> str:
    """The file content: stable, indented JSON with sorted tip ids, regimes small size first."""
    data = results.model_dump(mode="json")
    data["results"] = {
        tip_id: dict(sorted(by_regime.items(), key=lambda item: REGIME_ORDER.index(item[0])))
        for tip_id, by_regime in sorted(data["results"].items())
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def upgrade(data: Mapping[str, Any]) -> dict[str, Any]:
    """A results file of an older format as the current one (format 1 had one result per
    tip, measured without sizes: it becomes the ``default`` regime)."""
    out = dict(data)
    if out.get("schema_version") == 1 and isinstance(out.get("results"), dict):
        out["results"] = {tip_id: {"default": res} for tip_id, res in out["results"].items()}
        out["schema_version"] = 2
    return out


def read_results(path: Path) -> ResultsFile:
    """Read and validate a results file (an older format is upgraded, see `upgrade`).

    Raises:
        UserError: the file is not valid JSON or does not match `ResultsFile`.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ResultsFile.model_validate(upgrade(data) if isinstance(data, dict) else data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(file)"
        raise UserError(f"{path}: {where}: {first['msg']}") from None
    except ValueError as err:  # not JSON
        raise UserError(f"{path}: not a JSON results file: {err}") from None
    except OSError as err:
        raise UserError(f"cannot read {path}: {err.strerror}") from None


def check_writable(path: Path) -> None:
    """Fail with one line unless a results file can be written at ``path``: its folder exists
    and takes a new file (the file is written through a temporary file beside it), and
    ``path`` is not a folder. Nothing existing is changed.

    Raises:
        UserError: the file could not be written there.
    """
    parent = path.parent
    if path.is_dir():
        raise UserError(f"--out {path} is a folder: give a file name, e.g. {path / 'cpu.json'}")
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise UserError(f"cannot write {path}: the folder {parent} {what}")
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".probe")
    except OSError as err:
        raise UserError(f"cannot write {path}: {err.strerror or err}") from None
    os.close(fd)
    Path(probe).unlink(missing_ok=True)


def load_all(folder: Path | None = None) -> dict[str, ResultsFile]:
    """The committed results by device (``cpu``, ``cuda``); a device never measured is absent."""
    out = {}
    for device in ("cpu", "cuda"):
        path = results_path(device, folder)
        if path.is_file():
            out[device] = read_results(path)
    return out


def compatible(old: ResultsFile, device: str, env: Environment, settings: Settings) -> bool:
    """Whether results measured on ``device`` in ``env`` with ``settings`` may join ``old``."""
    return (
        old.device == device
        and old.environment.machine() == env.machine()
        and old.settings == settings
    )


def check_mergeable(
    old: ResultsFile | None, device: str, env: Environment, settings: Settings
) -> None:
    """Fail before measuring when a partial run could not be merged into ``old``.

    Raises:
        UserError: ``old`` was measured on another machine, software or settings.
    """
    if old is not None and not compatible(old, device, env, settings):
        raise UserError(
            "the results file was measured on another machine, torch version or settings "
            "(--quick, --threads): run every tip (no IDS) to replace it, or pass --out"
        )


def merge(old: ResultsFile | None, new: ResultsFile, replace: bool) -> ResultsFile:
    """Combine a previous file and a new run.

    With ``replace`` (a run over every tip), the new run is the whole file. Otherwise the
    new results update the old ones tip by tip (every regime of a tip measured anew
    replaces all of the tip's old ones); they must come from the same machine and software.

    Raises:
        UserError: a partial run on another machine than the file's.
    """
    if replace or old is None:
        return new
    check_mergeable(old, new.device, new.environment, new.settings)
    return new.model_copy(update={"results": {**old.results, **new.results}})


def write_results(path: Path, results: ResultsFile) -> None:
    """Write ``results`` to ``path`` atomically (temporary file + ``os.replace``)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(dumps(results))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class ResultsWriter:
    """Saves a run as it goes: called with the results so far after every tip, it writes
    them merged into the file's previous content, so an interrupted run keeps what it
    measured.

    While a run over every tip (``replace``) is under way, the tips it has not reached yet
    keep their previous results when the file comes from the same machine and settings;
    the finished run replaces the whole file (see `finish`).
    """

    def __init__(self, path: Path, old: ResultsFile | None, replace: bool) -> None:
        self.path, self.old, self.replace = path, old, replace
        self.saved: ResultsFile | None = None
        self.measured = 0  # tips of this run written so far

    def __call__(self, partial: ResultsFile) -> None:
        """Write the results measured so far."""
        self.measured = len(partial.results)
        keep_old = self.old is not None and compatible(
            self.old, partial.device, partial.environment, partial.settings
        )
        self.saved = merge(self.old, partial, replace=self.replace and not keep_old)
        write_results(self.path, self.saved)

    def finish(self, run: ResultsFile) -> ResultsFile:
        """Write the finished run (the whole file for a run over every tip); return it."""
        self.saved = merge(self.old, run, replace=self.replace)
        write_results(self.path, self.saved)
        return self.saved
