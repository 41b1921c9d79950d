"""compose --model gpt on several processes (gloo, CPU, fp32, small sizes): a DDP, FSDP2
and HSDP split of a batch is one batch; FSDP2 with accumulation reduce-scatters every
micro-batch, so a process holds sharded gradients (measured), and the step is the same
with --fsdp-no-sync-accum, which holds them whole; resume is exact on the same world size
and continues within 1e-4 across world sizes and between FSDP and HSDP.

Two torchrun launches serve every test: four processes (HSDP 2 x 2 and FSDP 1 x 4), then
two (everything else, including the resume of the four-process HSDP checkpoint)."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from tests.compose.gpt_cases import (
    MULTI_RUN,
    ONE_STEP,
    SIZES,
    assert_same_step,
    checkpoint,
    gpt_flags,
    losses,
    metrics,
    write_gpt,
)

#: The script that resumes: FSDP2 with async saves, accumulation 2 and an EMA.
RESUME_FLAGS = ("fsdp", "async-checkpoint", "accum", "ema")
RESUME = [*SIZES, "--log-every", "1", "--warmup-steps", "2", "--decay-steps", "7"]
RESUME += ["--ckpt-every", "2"]

#: Run by every rank: trains the composed script (its module name, first argument), with
#: GPT.forward wrapped to record the process's resident memory as each micro-batch starts
#: (the probe of the memory tips: generator.bench.memory), then writes them as JSON. The
#: second micro-batch of a step starts with the first one's gradients held.
PROBE = r"""
import gc
import importlib
import json
import os
import sys

from generator.bench.memory import _malloc_trim, _proc_status, glibc_returns_freed_memory


def main():
    module, out, *argv = sys.argv[1:]
    train = importlib.import_module(module)
    resident, forward = [], train.GPT.forward

    def measured(self, idx):
        gc.collect()
        _malloc_trim()
        resident.append(_proc_status("VmRSS")["VmRSS"])
        return forward(self, idx)

    glibc_returns_freed_memory()
    train.GPT.forward = measured
    sys.argv = [module + ".py", *argv]
    try:
        train.main()
    finally:
        train.GPT.forward = forward
    with open(f"{out}-rank{os.environ['RANK']}.json", "w") as f:
        json.dump(resident, f)
"""

#: The memory probe's model: 2 blocks of width 128 (0.43M parameters, 1.7 MB of fp32).
WIDE = ["--n-layer", "2", "--n-head", "2", "--n-embd", "128", "--seq-len", "32"]
WIDE += ["--vocab-size", "256", "--batch-size", "2", "--max-steps", "2", "--lr", "0"]


@pytest.fixture(scope="module")
def four_ranks(tmp_path_factory, runner):
    """Four processes: one step of HSDP 2 x 2 and of FSDP 1 x 4 (batches of 2, at learning
    rate 0); and HSDP 2 x 2 with async saves, accumulation and an EMA, 7 steps, whose
    step-4 checkpoint two processes resume without HSDP (test_hsdp_checkpoint_...)."""
    folder = tmp_path_factory.mktemp("four-ranks")
    write_gpt(folder, ["--model", "gpt", "--fsdp"], "fsdp.py")
    write_gpt(folder, gpt_flags(RESUME_FLAGS), "resume.py")
    hsdp = [*RESUME, "--batch-size", "1", "--hsdp", "2"]
    runs = [
        ("fsdp", [*ONE_STEP, "--batch-size", "2", "--hsdp", "2", "--out", "hsdp"]),
        ("fsdp", [*ONE_STEP, "--batch-size", "2", "--out", "fsdp4"]),
        ("resume", [*hsdp, "--max-steps", "7", "--out", "straight"]),
    ]
    (folder / "multi_run.py").write_text(MULTI_RUN, encoding="utf-8")
    run = runner.run(folder / "multi_run.py", [json.dumps(runs)], nproc=4, timeout=500)
    assert run.rc == 0, run.output
    return folder


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory, runner, four_ranks):
    """Two processes: one step of DDP 2 x 3, FSDP2 2 x 3 (clipped) and FSDP2 2 x
    accumulation 2 x 2 (and --fsdp-no-sync-accum), at learning rate 0; the memory probe
    on both accumulation scripts; FSDP2 with async saves, accumulation and an EMA: 7
    steps straight, 4 steps twice (one copy is resumed here, the other in one process),
    a rerun to 7 (which resumes); and the four-process HSDP checkpoint, resumed to 7."""
    folder = tmp_path_factory.mktemp("two-ranks")
    write_gpt(folder, ["--model", "gpt", "--ddp"], "ddp.py")
    write_gpt(folder, ["--model", "gpt", "--fsdp"], "fsdp.py")
    write_gpt(folder, ["--model", "gpt", "--fsdp", "--accum", "2"], "fsdp_accum.py")
    no_sync = ["--model", "gpt", "--fsdp", "--accum", "2", "--fsdp-no-sync-accum"]
    write_gpt(folder, no_sync, "fsdp_no_sync.py")
    write_gpt(folder, gpt_flags(RESUME_FLAGS), "resume.py")
    (folder / "probe.py").write_text(PROBE, encoding="utf-8")
    shutil.copytree(four_ranks / "straight" / "step-4", folder / "from-hsdp" / "step-4")
    resume = [*RESUME, "--batch-size", "2"]
    clip = ["--clip-grad-norm", "0.05"]
    runs = [
        ("ddp", [*ONE_STEP, "--batch-size", "3", "--out", "ddp"]),
        ("fsdp", [*ONE_STEP, "--batch-size", "3", *clip, "--out", "fsdp"]),
        ("fsdp_accum", [*ONE_STEP, "--batch-size", "2", "--out", "fsdp-accum"]),
        ("fsdp_no_sync", [*ONE_STEP, "--batch-size", "2", "--out", "fsdp-no-sync"]),
        ("probe", ["fsdp_accum", "memory-sync", *WIDE, "--out", "probe-sync"]),
        ("probe", ["fsdp_no_sync", "memory-no-sync", *WIDE, "--out", "probe-no-sync"]),
        ("resume", [*resume, "--max-steps", "7", "--out", "straight"]),
        ("resume", [*resume, "--max-steps", "4", "--out", "resumed"]),
        ("resume", [*resume, "--max-steps", "4", "--out", "to-one"]),
        ("resume", [*resume, "--max-steps", "7", "--out", "resumed"]),
        ("resume", [*resume, "--max-steps", "7", "--out", "from-hsdp"]),
    ]
    (folder / "multi_run.py").write_text(MULTI_RUN, encoding="utf-8")
    run = runner.run(folder / "multi_run.py", [json.dumps(runs)], nproc=2, timeout=500)
    assert run.rc == 0, run.output
    return folder, run.output


def test_ddp_fsdp_and_hsdp_splits_are_one_batch(two_ranks, four_ranks, refs):
    """DDP and FSDP2 2 x 3, FSDP2 2 x accumulation 2 x 2 (with and without a reduce-scatter
    a micro-batch), HSDP 2 replicas x 2 shards x 2 and FSDP2 1 x 4 x 2: the initial weights
    of one process without FSDP, the gradients of one batch of 6 (8), its token-mean loss
    logged once, by rank 0; clipping on DTensors uses the global norm."""
    folder, _ = two_ranks
    cases = [(folder / "ddp", "6"), (folder / "fsdp", "6-clip")]
    cases += [(folder / "fsdp-accum", "8"), (folder / "fsdp-no-sync", "8")]
    cases += [(four_ranks / "hsdp", "8"), (four_ranks / "fsdp4", "8")]
    for out, ref in cases:
        records = metrics(out)
        assert len(records) == 1, records  # rank 0 alone writes the metrics
        assert_same_step({**checkpoint(out), "record": records[0]}, refs[ref])
    clipped, ref = metrics(folder / "fsdp")[0], refs["6-clip"]["record"]
    assert clipped["grad_norm"] > 0.05  # it did clip
    assert math.isclose(clipped["grad_norm"], ref["grad_norm"], rel_tol=1e-5)


def test_fsdp_accumulation_holds_sharded_gradients(two_ranks):
    """Two processes, accumulation 2: between micro-batches each holds its half of the
    gradients (the default: a reduce-scatter each micro-batch); with
    --fsdp-no-sync-accum, all of them, in fp32 (torchtitan's reason to sync)."""
    folder, _ = two_ranks
    parameters = 2 * 12 * 128**2 + 256 * 128 + 32 * 128 + 5 * 128  # blocks, embeddings
    whole = 4 * parameters  # fp32 bytes
    held = {}
    for name in ("sync", "no-sync"):
        for rank in (0, 1):
            resident = json.loads((folder / f"memory-{name}-rank{rank}.json").read_text())
            # Step 2 (step 1 allocates what is kept for later too), after micro-batch 1
            held[name, rank] = resident[3] - resident[2]
    for rank in (0, 1):
        assert abs(held["sync", rank] - whole / 2) < 0.15 * whole, (held, whole)
        assert abs(held["no-sync", rank] - whole) < 0.15 * whole, (held, whole)
    print(f"gradient bytes held per process, of {whole:,}: {held}")


def test_fsdp_resume_is_exact_on_two_ranks(two_ranks):
    """7 steps straight, or 4 and a rerun to 7 (it resumes): the same losses and state,
    bit for bit; the three newest checkpoints kept, none torn."""
    import torch

    folder, output = two_ranks
    assert "resumed from resumed/step-4 at step 4" in output
    straight, resumed = losses(folder / "straight"), losses(folder / "resumed")
    assert [resumed[s] for s in (5, 6, 7)] == [straight[s] for s in (5, 6, 7)]
    a, b = checkpoint(folder / "straight"), checkpoint(folder / "resumed")
    for key in ("model", "exp_avg", "ema"):
        for name, value in a[key].items():
            assert torch.equal(value, b[key][name]), (key, name)
    assert a["scheduler"] == b["scheduler"] and a["step"] == b["step"] == 7
    names = sorted(p.name for p in (folder / "resumed").iterdir() if "step" in p.name)
    assert names == ["step-4", "step-6", "step-7"]  # --keep 3, published by renames


def test_hsdp_checkpoint_resumes_on_two_ranks_without_hsdp(two_ranks, four_ranks):
    """HSDP 2 x 2 (batches of 1) for 4 steps, then 2 processes of FSDP2 (batches of 2: the
    same global batch) to 7: within 1e-4 of the four-process HSDP run."""
    folder, output = two_ranks
    assert "resumed from from-hsdp/step-4 at step 4" in output
    straight, resumed = losses(four_ranks / "straight"), losses(folder / "from-hsdp")
    for s in (5, 6, 7):
        assert math.isclose(resumed[s], straight[s], rel_tol=1e-4), (s, resumed, straight)


def test_two_rank_checkpoint_resumes_in_one_process(two_ranks, runner):
    """The 2-rank FSDP2 checkpoint at step 4 resumes in 1 process (the same global batch:
    1 x 2 x 4) and continues within 1e-4 of the 2-rank run; --export-weights then writes
    the EMA as one state dict for torch.load(weights_only=True)."""
    import torch

    folder, _ = two_ranks
    args = [*RESUME, "--batch-size", "4", "--max-steps", "7", "--out", "to-one"]
    run = runner.run(folder / "resume.py", args)
    assert run.rc == 0, run.output
    assert "resumed from to-one/step-4 at step 4" in run.output
    straight, alone = losses(folder / "straight"), losses(folder / "to-one")
    for s in (5, 6, 7):
        assert math.isclose(alone[s], straight[s], rel_tol=1e-4), (s, alone[s], straight[s])

    run = runner.run(folder / "resume.py", ["--export-weights", "ema.pt", "--out", "to-one"])
    assert run.rc == 0, run.output
    exported = torch.load(folder / "ema.pt", weights_only=True)
    ema = checkpoint(folder / "to-one")["ema"]
    assert exported["model"].keys() == ema.keys()
    assert all(torch.equal(exported["model"][k], ema[k]) for k in ema)
    assert exported["config"]["n_embd"] == 32 and exported["config"]["tokens"] == "bytes"
