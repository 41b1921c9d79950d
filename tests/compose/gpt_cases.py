"""Cases and helpers for tests/compose/test_gpt.py: the GPT variants that must compose, lint
clean and train, the tiny sizes they train at, and readers for what a run leaves behind
(``metrics.jsonl``, ``last.pt`` or a ``torch.distributed.checkpoint`` folder)."""

from __future__ import annotations

import json
import math
from itertools import combinations
from pathlib import Path

from generator.compose.options import CORE_FEATURES, OPTIONS

#: The GPT's feature flags (without --amp-dtype), as ``--`` names.
GPT_FEATURES = [
    o.flag[2:]
    for o in OPTIONS
    if o.group == "features" and "gpt" in o.models and o.name != "amp_dtype"
]
#: Test-sized values for the flags that take one.
GPT_VALUES = {
    "accum": "2",
    "clip-grad-norm": "1.0",
    "seed": "0",
    "eval-every": "2",
    "ema": "0.9",
    "lr-schedule": "cosine",
    "activation-checkpointing": "selective",
}
#: What a flag needs beside it to compose.
NEEDS = {"async-checkpoint": ("fsdp",)}


def gpt_flags(features: tuple[str, ...]) -> list[str]:
    """Composer flags for ``features`` (``--model gpt`` first), with test-sized values."""
    out = ["--model", "gpt"]
    for feature in features:
        out.append(f"--{feature}")
        if feature in GPT_VALUES:
            out.append(GPT_VALUES[feature])
    return out


#: Every feature at once, with FSDP or with DDP instead (they exclude each other).
FULL_FSDP = tuple(f for f in GPT_FEATURES if f != "ddp")
FULL_DDP = tuple(f for f in GPT_FEATURES if f not in ("fsdp", "async-checkpoint"))


def _single(feature: str) -> tuple[str, ...]:
    return (*NEEDS.get(feature, ()), feature)


GPT_SUPPORTED: dict[str, tuple[str, ...]] = {
    "plain": (),
    **{f: _single(f) for f in GPT_FEATURES},
    "activation-checkpointing-full": ("activation-checkpointing",),
    **{f"{a}+{b}": (a, b) for a, b in combinations(CORE_FEATURES["gpt"], 2)},
    "full-fsdp": FULL_FSDP,
    "full-ddp": FULL_DDP,
}

#: Flags the GPT refuses: the flags and a part of the one-line message.
GPT_UNSUPPORTED: list[tuple[str, list[str], str]] = [
    ("channels-last", ["--model", "gpt", "--channels-last"], "--model convnet only"),
    ("cudnn-benchmark", ["--model", "gpt", "--cudnn-benchmark"], "--model convnet only"),
    ("workers", ["--model", "gpt", "--workers", "2"], "--model convnet only"),
    ("ddp+fsdp", ["--model", "gpt", "--ddp", "--fsdp"], "choose one"),
    ("async-without-fsdp", ["--model", "gpt", "--async-checkpoint"], "needs --fsdp"),
    ("fp16", ["--model", "gpt", "--amp", "--amp-dtype", "fp16"], "trains in bf16"),
    ("fsdp-on-convnet", ["--fsdp"], "--model gpt only"),
    ("selective-on-convnet", ["--activation-checkpointing", "selective"], "needs --model gpt"),
    ("ema-1", ["--model", "gpt", "--ema", "1"], "--ema must be in (0, 1)"),
    ("ema-0", ["--model", "gpt", "--ema", "0"], "--ema must be in (0, 1)"),
    ("lr-schedule-on-convnet", ["--lr-schedule", "cosine"], "--model gpt only"),
]

#: A GPT that trains in a few CPU-seconds: 2 blocks of width 32 on sequences of 32.
SIZES = ["--n-layer", "2", "--n-head", "2", "--n-embd", "32", "--seq-len", "32"]
SIZES += ["--vocab-size", "256"]

#: The tips a GPT script leaves out although their feature is on: it trains in bf16 (or
#: fp32) and has no GradScaler, which these two are about.
NOT_FOR_GPT = {"gradscaler-with-accumulation", "gradscaler-unscale-before-clipping"}


def metrics(out: Path) -> list[dict]:
    """The records of ``OUT/metrics.jsonl``."""
    lines = (out / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def losses(out: Path) -> dict[int, float]:
    """The logged loss of each step."""
    return {r["step"]: r["loss"] for r in metrics(out)}


def checkpoint(out: Path) -> dict:
    """What a run saved in ``out``, the same for either format: ``model`` and ``ema``
    (name -> tensor), ``exp_avg`` (name -> AdamW's first moment; in ``last.pt`` with
    several parameter groups, optimizer id -> moment), ``param_groups`` (their options and
    ``params``: names, or optimizer ids), ``scheduler`` and ``step``."""
    import torch

    folders = sorted(out.glob("step-*"), key=lambda p: int(p.name[5:]))
    if folders:  # torch.distributed.checkpoint, by every rank
        from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

        joined = out / "joined.pt"
        dcp_to_torch_save(folders[-1], joined)
        state = torch.load(joined, weights_only=True)
        joined.unlink()
        app = state["app"]
        optim = app["optimizer"]
        return {
            "model": app["model"],
            "exp_avg": {name: s["exp_avg"] for name, s in optim["state"].items()},
            "param_groups": optim["param_groups"],
            "ema": state.get("ema"),
            "scheduler": state.get("scheduler"),
            "step": state["step"],
        }
    state = torch.load(out / "last.pt", weights_only=True)
    # No buffers: the parameters, in their order, which is the optimizer's with one group.
    names = list(state["model"])
    optim = state["optimizer"]
    groups = optim["param_groups"]
    if len(groups) > 1:  # ids count through the groups: no names
        names = list(range(len(names)))
    return {
        "model": state["model"],
        "exp_avg": {names[i]: s["exp_avg"] for i, s in optim["state"].items()},
        "param_groups": groups,
        "ema": state.get("ema"),
        "scheduler": state.get("scheduler"),
        "step": state["step"],
    }


def relative_error(a: dict, b: dict) -> float:
    """The largest difference between same-named tensors, relative to each one's scale."""
    assert a.keys() == b.keys(), (sorted(a), sorted(b))
    worst = 0.0
    for name, ref in b.items():
        scale = ref.abs().max().item()
        diff = (a[name] - ref).abs().max().item()
        worst = max(worst, diff / scale if scale else diff)
    return worst


def finite(values: list[float]) -> bool:
    return all(math.isfinite(v) for v in values)


#: Run by every rank of a torchrun job: trains each (module, argv) of its argument (JSON)
#: in turn, each run starting and ending its own process group, so that one launch checks
#: several properties. Each run gets a key space of its own in torchrun's store: c10d names
#: its groups from a counter that destroy_process_group() resets, so a second run would
#: read the first run's addresses. (The runner's workers skip interpreter shutdown, where a
#: gloo rank can abort after its work is done.)
MULTI_RUN = r"""
import importlib
import json
import os
import sys

import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
init_process_group = dist.init_process_group


def init_in_a_fresh_key_space(backend, store=None, **kwargs):
    if store is None:
        address, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
        store = dist.PrefixStore(f"run-{run}/", dist.TCPStore(address, port, is_master=False))
    return init_process_group(backend, store=store, **kwargs)


dist.init_process_group = init_in_a_fresh_key_space
for run, (module, argv) in enumerate(json.loads(sys.argv[1])):
    sys.argv = [module + ".py", *argv]
    importlib.import_module(module).main()
"""
