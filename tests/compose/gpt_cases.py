"""Cases and helpers for tests/compose/test_gpt.py: the GPT variants that must compose, lint
clean and train, the tiny sizes they train at, and readers for what a run leaves behind
(``metrics.jsonl``, ``last.pt`` or a ``torch.distributed.checkpoint`` folder)."""

from __future__ import annotations

import json
import math
from itertools import combinations
from pathlib import Path

from generator.compose.options import CORE_FEATURES, OPTIONS
from generator.compose.script import compose, read_tips_by_feature
from generator.lint import lint_source
from tests.compose.compose_cases import check_composed_source, options

#: The GPT's feature flags, as ``--`` names.
GPT_FEATURES = [o.flag[2:] for o in OPTIONS if o.group == "features" and "gpt" in o.models]
#: Test-sized values for the flags that take one.
GPT_VALUES = {
    "accum": "2",
    "seed": "0",
    "ema": "0.9",
    "activation-checkpointing": "selective",
}
#: What a flag needs beside it to compose.
NEEDS = {"async-checkpoint": ("fsdp",), "fsdp-no-sync-accum": ("fsdp", "accum")}


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
FULL_DDP = tuple(
    f for f in GPT_FEATURES if f not in ("fsdp", "async-checkpoint", "fsdp-no-sync-accum")
)


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
    ("amp", ["--model", "gpt", "--amp"], "--model convnet only"),  # the GPT's default
    ("clip-grad-norm", ["--model", "gpt", "--clip-grad-norm", "1"], "--model convnet only"),
    ("eval-every", ["--model", "gpt", "--eval-every", "5"], "--model convnet only"),
    ("fsdp-on-convnet", ["--fsdp"], "--model gpt only"),
    ("selective-on-convnet", ["--activation-checkpointing", "selective"], "needs --model gpt"),
    ("ema-1", ["--model", "gpt", "--ema", "1"], "--ema must be in (0, 1)"),
    ("ema-0", ["--model", "gpt", "--ema", "0"], "--ema must be in (0, 1)"),
    ("no-sync-without-fsdp", ["--model", "gpt", "--fsdp-no-sync-accum"], "needs --fsdp"),
    (
        "no-sync-without-accum",
        ["--model", "gpt", "--fsdp", "--fsdp-no-sync-accum"],
        "needs --accum N",
    ),
    ("accum-too-many", ["--model", "gpt", "--accum", "1025"], "--accum must be in [1, 1024]"),
]

#: A GPT that trains in a few CPU-seconds: 2 blocks of width 32 on sequences of 32.
SIZES = ["--n-layer", "2", "--n-head", "2", "--n-embd", "32", "--seq-len", "32"]
SIZES += ["--vocab-size", "256"]

#: The tips a GPT script leaves out although their feature is on: it trains in bf16 (or
#: fp32) and has no GradScaler, which two are about, and draws its batches from the step,
#: with no sampler.
NOT_FOR_GPT = {
    "gradscaler-with-accumulation",
    "gradscaler-unscale-before-clipping",
    "distributed-sampler-set-epoch",
}


def metrics(out: Path) -> list[dict]:
    """The records of ``OUT/metrics.jsonl``."""
    lines = (out / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def losses(out: Path) -> dict[int, float]:
    """The logged loss of each step."""
    return {r["step"]: r["loss"] for r in metrics(out)}


def checkpoint(out: Path) -> dict:
    """What a run saved last in ``out``, the same for either format: ``model`` and ``ema``
    (name -> tensor), ``exp_avg`` (name -> AdamW's first moment), ``param_groups`` (their
    options and ``params``: names, or optimizer ids), ``scheduler``, ``step`` and, in a
    ``.pt`` file, ``config``."""
    import torch

    saved = sorted(out.glob("step-*"), key=lambda p: int(p.name[5:].removesuffix(".pt")))
    if saved[-1].is_dir():  # torch.distributed.checkpoint, by every rank
        from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

        joined = out / "joined.pt"
        dcp_to_torch_save(saved[-1], joined)
        state = torch.load(joined, weights_only=True)
        joined.unlink()
        optim = state["optimizer"]
        exp_avg = {name: s["exp_avg"] for name, s in optim["state"].items()}
    else:
        state = torch.load(saved[-1], weights_only=True)
        optim = state["optimizer"]
        # Parameters only, in order; the optimizer's ids count through its groups: the
        # matrices, then the norm gains.
        weights = state["model"]
        names = [n for n, w in weights.items() if w.ndim >= 2]
        names += [n for n, w in weights.items() if w.ndim < 2]
        exp_avg = {names[i]: s["exp_avg"] for i, s in optim["state"].items()}
    return {
        "model": state["model"],
        "exp_avg": exp_avg,
        "param_groups": optim["param_groups"],
        "ema": state.get("ema"),
        "scheduler": state.get("scheduler"),
        "step": state["step"],
        "config": state.get("config"),
    }


def saved_config(out: Path) -> dict:
    """The options saved with the last checkpoint in ``out``: in a step-N.pt, or in a
    step-N folder's config.json."""
    saved = sorted(out.glob("step-*"), key=lambda p: int(p.name[5:].removesuffix(".pt")))
    if saved[-1].is_dir():
        return json.loads((saved[-1] / "config.json").read_text(encoding="utf-8"))
    return checkpoint(out)["config"]


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
#: read the first run's addresses; and DTensor's sharding cache is cleared, since it keys
#: on meshes by their layout and would hand a run the last one's (and its dead groups).
#: (The runner's workers skip interpreter shutdown, where a gloo rank can abort after its
#: work is done.)
MULTI_RUN = r"""
import importlib
import json
import os
import sys

import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor

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
    DTensor._op_dispatcher.sharding_propagator.propagate_op_sharding.cache_clear()
    torch._C._clear_DTensor_sharding_propagator_cache()  # its C++ copy
"""


# --- composing, and one step --------------------------------------------------------


def write_gpt(folder: Path, composer_flags: list[str], name: str = "train.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(compose(options(composer_flags), read_tips_by_feature()), encoding="utf-8")
    return path


def check_gpt_source(script: Path, composer_flags: list[str]) -> None:
    """No template leftovers, every applicable tip cited, short lines, ruff and lint clean."""
    text = check_composed_source(script, composer_flags, frozenset(NOT_FOR_GPT))
    findings = lint_source(text, str(script))
    assert findings == [], [f"{f.line}: {f.rule} {f.message}" for f in findings]


#: One step at learning rate 0, unclipped (clipping is on by default).
ONE_STEP = [*SIZES, "--max-steps", "1", "--log-every", "1", "--lr", "0", "--clip-grad-norm", "0"]


def one_step(runner, folder: Path, composer_flags: list[str], args: list[str]) -> dict:
    """One step at learning rate 0 (the weights stay the initial ones; AdamW's exp_avg is
    (1 - beta1) times the step's gradient): the checkpoint and the step's log record."""
    script = write_gpt(folder, ["--model", "gpt", *composer_flags])
    run = runner.run(script, [*ONE_STEP, *args, "--out", "out"])
    assert run.rc == 0, run.output
    return {**checkpoint(folder / "out"), "record": metrics(folder / "out")[0]}


def assert_same_step(state: dict, ref: dict, tolerance: float = 1e-4) -> None:
    """Same initial weights (bit for bit), same gradients (exp_avg, relative to scale)
    and the same logged loss: the token mean over the whole global batch."""
    import torch

    for name, weight in ref["model"].items():
        assert torch.equal(state["model"][name], weight), name
    assert relative_error(state["exp_avg"], ref["exp_avg"]) <= tolerance
    assert math.isclose(state["record"]["loss"], ref["record"]["loss"], rel_tol=1e-5)
