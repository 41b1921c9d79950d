"""The namespace a tip's bench code runs in: a real module holding torch, the device, the
helpers of `generator.bench.memory` and the size entry's names; and the sizes a tip runs at."""

from __future__ import annotations

import gc
import importlib.machinery
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from generator.bench.memory import make_peak_bytes, saved_tensor_bytes, tensor_bytes
from generator.records.benchspec import BenchSize
from generator.records.schema import Tip

#: The name under which the bench namespace of the tip being measured is a module.

#: The name under which the bench namespace of the tip being measured is a module.
NAMESPACE_MODULE = "pytorch_tips_bench"


@contextmanager
def restored_torch_state() -> Iterator[None]:
    """Undo global switches a tip's bench code may flip, so the next tip starts clean."""
    import torch

    state = (
        torch.is_grad_enabled(),
        torch.are_deterministic_algorithms_enabled(),
        torch.is_anomaly_enabled(),
        torch.get_default_dtype(),
        torch.get_float32_matmul_precision(),
        torch.backends.cudnn.benchmark,
        torch.backends.cudnn.deterministic,
        torch.backends.cudnn.allow_tf32,
        torch.get_num_threads(),
    )
    try:
        yield
    finally:
        grad, deterministic, anomaly, dtype, precision, *cudnn, threads = state
        torch.set_grad_enabled(grad)
        torch.use_deterministic_algorithms(deterministic)
        torch.autograd.set_detect_anomaly(anomaly)
        torch.set_default_dtype(dtype)
        torch.set_float32_matmul_precision(precision)
        cudnn_benchmark, cudnn_deterministic, cudnn_tf32 = cudnn
        torch.backends.cudnn.benchmark = cudnn_benchmark
        torch.backends.cudnn.deterministic = cudnn_deterministic
        torch.backends.cudnn.allow_tf32 = cudnn_tf32
        torch.set_num_threads(threads)


@contextmanager
def bench_namespace(device: str, size: BenchSize | None = None) -> Iterator[dict[str, Any]]:
    """A fresh namespace for a tip's bench code, registered as the module
    `NAMESPACE_MODULE` until the block ends.

    It holds ``torch``, ``device``, the helpers (``tensor_bytes``, ``saved_tensor_bytes``,
    ``peak_bytes``) and the names of ``size``. Being a real module lets ``torch.compile``
    import the module of a function defined in ``setup`` (``import_module(fn.__module__)``
    when it inlines the function), and lets pickle find such a function by name. On exit the
    previous registration is restored; on CUDA, cached blocks are released for the next tip.
    """
    import torch

    module = types.ModuleType(NAMESPACE_MODULE, "Bench namespace of the tip being measured.")
    module.__spec__ = importlib.machinery.ModuleSpec(NAMESPACE_MODULE, loader=None)
    ns = module.__dict__
    ns.update(
        torch=torch,
        device=device,
        tensor_bytes=tensor_bytes,
        saved_tensor_bytes=saved_tensor_bytes,
        peak_bytes=make_peak_bytes(device),
    )
    if size is not None:
        ns.update(size.values)
    previous = sys.modules.get(NAMESPACE_MODULE)
    sys.modules[NAMESPACE_MODULE] = module
    try:
        yield ns
    finally:
        if previous is None:
            sys.modules.pop(NAMESPACE_MODULE, None)
        else:
            sys.modules[NAMESPACE_MODULE] = previous
        # Drop the tip's tensors and models (on CUDA, then release the cached blocks). Dunder
        # names stay: torch.compile keeps its own there and removes them itself later.
        for name in [k for k in ns if not k.startswith("__")]:
            del ns[name]
        if device == "cuda":
            gc.collect()
            torch.cuda.empty_cache()


def size_entries(tip: Tip, device: str) -> list[BenchSize | None]:
    """What ``tip`` is measured at on ``device``: its ``bench.sizes`` entries there, in
    order, or ``[None]`` (one run, the ``default`` regime) for a bench without them."""
    assert tip.bench is not None
    sizes = tip.bench.sizes.for_device(device) if tip.bench.sizes is not None else []
    return list(sizes) or [None]


def regime_of(size: BenchSize | None) -> str:
    """The regime a size entry measures (``default`` without sizes)."""
    return "default" if size is None else size.regime
