"""The GPUs' dense peak FLOP/s, by the name ``torch.cuda.get_device_name()`` gives.

One table for the composed scripts (``plumbing.py.j2`` writes it into every ``train.py`` as
``GPU_PEAK_TFLOPS``, for the MFU they log) and for ``pytorch-tips doctor``'s MFU. Standard
library only: the composer page runs this package in the browser.
"""

from __future__ import annotations

import re
from typing import NamedTuple

PRECISIONS = ("bf16", "tf32", "fp32")


class Peak(NamedTuple):
    """A GPU's dense peak TFLOP/s (no 2:4 sparsity) in NVIDIA's datasheets: bf16 (= fp16),
    TF32 and fp32; ``pattern`` matches its device name, ``note`` is the table's comment."""

    pattern: str
    bf16: float
    tf32: float
    fp32: float
    note: str = ""


GPU_PEAK_TFLOPS = (
    Peak(r"H100.*PCIe", 756.5, 378.0, 51.0),
    Peak(r"\bH[12]00\b.*NVL", 835.5, 417.5, 60.0, '"NVIDIA H100 NVL", "NVIDIA H200 NVL"'),
    Peak(r"\bH[12]00\b", 989.4, 494.7, 66.9, 'SXM: "NVIDIA H100 80GB HBM3", "NVIDIA H200"'),
    Peak(r"\bB200\b", 2250.0, 1125.0, 75.0, "HGX B200"),
    Peak(r"\bGB200\b", 2500.0, 1250.0, 80.0, "each GPU of a GB200 superchip"),
    Peak(r"\bA100\b", 312.0, 156.0, 19.5, "SXM4 and PCIe, 40 and 80 GB"),
    Peak(r"\bL40S\b", 362.1, 183.0, 91.6),
    Peak(r"\bL4\b", 121.0, 60.0, 30.3),
    Peak(r"\bA10\b", 125.0, 62.5, 31.2),
    Peak(r"RTX 4090", 165.2, 82.6, 82.6, "bf16 with fp32 accumulation, as PyTorch uses"),
)


def peak_tflops(gpu_name: str, precision: str) -> float | None:
    """The peak TFLOP/s of ``gpu_name`` in ``precision`` (bf16, tf32 or fp32); None if the
    table lacks it (the composed scripts' function of the same name does the same)."""
    for peak in GPU_PEAK_TFLOPS:
        if re.search(peak.pattern, gpu_name, re.IGNORECASE):
            return float(getattr(peak, precision))
    return None
