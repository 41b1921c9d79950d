"""The machine a benchmark runs on: its description in the results file (`environment`) and
the check that the requested device works before anything is measured (`check_device`)."""

from __future__ import annotations

import datetime
import os
import platform
import shutil
import subprocess
import warnings
from typing import Any

from generator.bench.results import Environment
from generator.errors import UserError


def cpu_name() -> str | None:
    """The CPU's model name from /proc/cpuinfo (Linux), or None."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(("model name", "Model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _cpu_model() -> str:
    return cpu_name() or platform.processor() or "unknown CPU"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def gpu_driver(index: int = 0) -> str | None:
    """The NVIDIA driver version, from pynvml when it is installed, else from ``nvidia-smi``
    when it is on the PATH; ``None`` when neither answers. Never raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the old `pynvml` package warns on import
            import pynvml  # optional: nvidia-ml-py

        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # not installed, no NVML library, no permission
        pass
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        proc = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader", f"--id={index}"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = proc.stdout.strip().splitlines()
    return lines[0].strip() if proc.returncode == 0 and lines else None


def environment(device: str, num_threads: int) -> Environment:
    """Describe this machine and its software for a results file.

    On CUDA: the current GPU's name, compute capability and memory, the number of GPUs,
    the driver (see `gpu_driver`), and the CUDA and cuDNN versions torch was built with.
    """
    import torch

    gpu: dict[str, Any] = {}
    if device == "cuda":
        index = torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        gpu = dict(
            gpu_name=props.name,
            gpu_compute_capability=f"{props.major}.{props.minor}",
            gpu_memory_bytes=int(props.total_memory),
            gpu_count=torch.cuda.device_count(),
            gpu_driver=gpu_driver(index),
            cuda=torch.version.cuda,
            cudnn=None if cudnn is None else str(cudnn),
        )
    return Environment(
        cpu_model=_cpu_model(),
        cpu_arch=platform.machine(),
        cpu_cores=_cores(),
        cpu_capability=torch.backends.cpu.get_cpu_capability(),
        torch=torch.__version__,
        python=platform.python_version(),
        platform=platform.platform(terse=True),
        num_threads=num_threads,
        date=now(),
        **gpu,
    )


def check_device(device: str) -> None:
    """Fail with one line when ``device`` cannot be measured here.

    Raises:
        UserError: ``cuda`` without a usable CUDA GPU.
    """
    if device != "cuda":
        return
    import torch

    if not torch.cuda.is_available():
        raise UserError(
            "no CUDA GPU here: CUDA figures are only measured on a GPU (use --device cpu)"
        )
    try:
        torch.zeros(1, device="cuda").add_(1).item()
    except RuntimeError as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(f"the CUDA GPU does not work: {first}") from None


def now() -> str:
    """The current UTC time, ISO 8601, to the second."""
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
