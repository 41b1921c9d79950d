"""compose --model gpt: every variant composes, lints clean (ruff and our own lint) and
trains; and, in one process on CPU (fp32, small sizes), the global batch is the unit
however it is split into micro-batches, the speed flags and checkpointing leave the step
unchanged, resume is exact and keeps the saved schedule, the FLOP formula agrees with
FlopCounterMode, selective checkpointing recomputes half the matmuls (torchtitan's policy)
and the default recipe learns at least as fast as the old one with cosine and clipping.

Several processes: test_gpt_ranks.py. Faults and reruns: test_gpt_runs.py. Input and
formats: test_gpt_inputs.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from generator.compose.script import compose, read_tips_by_feature
from tests.compose.compose_cases import assert_refused_before_writing, options
from tests.compose.gpt_cases import (
    FULL_DDP,
    FULL_FSDP,
    GPT_SUPPORTED,
    GPT_UNSUPPORTED,
    ONE_STEP,
    SIZES,
    assert_same_step,
    check_gpt_source,
    checkpoint,
    finite,
    gpt_flags,
    losses,
    metrics,
    one_step,
    saved_config,
    write_gpt,
)

#: The most lines of a composed script, docstring included: with every flag, and with
#: none. The GPT with every flag was 600 before issue 29, whose target was 650; its recipe,
#: checkpoints that lose nothing, data formats and checks, sampling, --config and HSDP
#: took it to 980 (DDP 905, the plain GPT 726, the conv net 657 and 420); trimming
#: without dropping any of them brought it back here (the SLURM job script the composer
#: page shows beside Download is 9 of the lines). Lower these as scripts shrink.
MAX_LINES = {
    "convnet": 600,
    "convnet-plain": 393,
    "gpt-fsdp": 879,
    "gpt-ddp": 812,
    "gpt-plain": 649,
}


# --- every variant ------------------------------------------------------------------------


@pytest.mark.parametrize("case", list(GPT_SUPPORTED))
def test_gpt_variant_composes_and_trains(case, tmp_path, runner):
    """Each variant trains 4 steps in one process (a world of one under --ddp and --fsdp):
    the loss falls, every log record has its fields, the checkpoint has the step."""
    features = GPT_SUPPORTED[case]
    composer_flags = gpt_flags(features)
    script = write_gpt(tmp_path, composer_flags)
    check_gpt_source(script, composer_flags)
    if case.startswith("full"):
        budget = MAX_LINES["gpt-fsdp" if "fsdp" in features else "gpt-ddp"]
        assert len(script.read_text(encoding="utf-8").splitlines()) <= budget

    # Batches of 6, as in the references below: a compiled graph then comes from the cache.
    args = [*SIZES, "--batch-size", "6", "--max-steps", "4", "--log-every", "2", "--out", "out"]
    args += ["--warmup-steps", "1", "--eval-every", "2", "--eval-tokens", "64"]
    run = runner.run(script, args)
    assert run.rc == 0, run.output
    records = metrics(tmp_path / "out")
    assert [r["step"] for r in records] == [2, 4], records
    assert finite([r["loss"] for r in records]) and records[1]["loss"] < records[0]["loss"]
    for r in records:
        assert r["tokens_per_s"] > 0 and r["tflops"] > 0 and r["mfu"] is None  # a CPU
        assert finite([r["eval_loss"], r["grad_norm"]]) and r["skipped_steps"] == 0
        assert ("ema_eval_loss" in r) == ("ema" in features)  # the EMA's, evaluated too
        assert ("peak_memory_mib" in r) == ("memory-stats" in features)
    assert run.output.count("step ") >= 2 and "tokens_per_s" in run.output
    state = checkpoint(tmp_path / "out")
    assert state["step"] == 4 and saved_config(tmp_path / "out")["n_embd"] == 32
    assert (state["ema"] is not None) == ("ema" in features)
    if "profile" in features:
        (trace,) = (tmp_path / "out").glob("trace*.json")
        assert json.loads(trace.read_text())["traceEvents"]


@pytest.mark.parametrize(
    ("composer_flags", "message"),
    [(f, m) for _, f, m in GPT_UNSUPPORTED],
    ids=[name for name, _, _ in GPT_UNSUPPORTED],
)
def test_gpt_refuses_what_it_cannot_honour(composer_flags, message, tmp_path, capsys):
    assert_refused_before_writing(composer_flags, message, tmp_path, capsys)


def test_scripts_fit_the_line_budget():
    """Either model with every flag and with none, docstring included, within MAX_LINES."""
    from tests.compose.compose_cases import FULL, flags

    cases = {"convnet": flags(FULL), "convnet-plain": [], "gpt-plain": ["--model", "gpt"]}
    cases |= {"gpt-fsdp": gpt_flags(FULL_FSDP), "gpt-ddp": gpt_flags(FULL_DDP)}
    for name, composer_flags in cases.items():
        text = compose(options(composer_flags), read_tips_by_feature())
        assert len(text.splitlines()) <= MAX_LINES[name], (name, len(text.splitlines()))


# --- one process: references and the properties they show ----------------------------------


def test_accumulation_3x2_is_batch_6(tmp_path, runner, refs):
    state = one_step(runner, tmp_path, ["--accum", "3"], ["--batch-size", "2"])
    assert_same_step(state, refs["6"])


@pytest.mark.parametrize(
    ("flag", "tolerance"),
    [("--fused-optimizer", 1e-6), ("--compile", 1e-4)],
    ids=["fused-optimizer", "compile"],
)
def test_speed_flags_leave_the_step_unchanged(flag, tolerance, tmp_path, runner, refs):
    """Fused AdamW and per-block compilation compute the same step (fp32, CPU)."""
    state = one_step(runner, tmp_path, [flag], ["--batch-size", "6"])
    assert_same_step(state, refs["6"], tolerance)


@pytest.mark.parametrize("mode", ["full", "selective"])
def test_activation_checkpointing_leaves_the_step_unchanged(mode, tmp_path, runner, refs):
    state = one_step(runner, tmp_path, ["--activation-checkpointing", mode], ["--batch-size", "6"])
    assert_same_step(state, refs["6"], 1e-6)


def test_bf16_amp_is_close_to_fp32(tmp_path, runner, refs):
    """bf16 autocast (the default on CUDA; --amp on a CPU): the same weights, a loss within
    1% and gradients along the fp32 ones."""
    import torch

    state = one_step(runner, tmp_path, [], ["--batch-size", "6", "--amp"])
    ref = refs["6"]
    assert math.isclose(state["record"]["loss"], ref["record"]["loss"], rel_tol=1e-2)
    a = torch.cat([v.flatten() for v in state["exp_avg"].values()])
    b = torch.cat([ref["exp_avg"][k].flatten() for k in state["exp_avg"]])
    assert torch.nn.functional.cosine_similarity(a, b, dim=0) > 0.99


def test_seed_sets_the_initial_weights(tmp_path, runner, refs):
    """--seed 7 composes a script whose default seed is 7: other initial weights."""
    import torch

    state = one_step(runner, tmp_path, ["--seed", "7"], ["--batch-size", "6"])
    matrices = {k: w for k, w in refs["6"]["model"].items() if w.ndim == 2}
    assert not any(torch.equal(w, state["model"][k]) for k, w in matrices.items())


def test_ema_averages_the_weights(tmp_path, runner, refs):
    """After one step, the EMA is decay * initial + (1 - decay) * new weights."""
    script = write_gpt(tmp_path, ["--model", "gpt", "--ema", "0.75"])
    run = runner.run(script, [*SIZES, "--max-steps", "1", "--batch-size", "6", "--out", "out"])
    assert run.rc == 0, run.output
    state = checkpoint(tmp_path / "out")
    for name, initial in refs["6"]["model"].items():
        expected = 0.75 * initial + 0.25 * state["model"][name]
        assert (state["ema"][name] - expected).abs().max() < 1e-6, name
        assert not (state["model"][name] == initial).all(), name  # the step did move it


def test_weight_decay_on_matrices_only(tmp_path, runner):
    """Two groups, in every GPT script: weight decay on every matrix, none on the gains."""
    script = write_gpt(tmp_path, ["--model", "gpt"])
    run = runner.run(script, [*ONE_STEP, "--batch-size", "2", "--out", "out"])
    assert run.rc == 0, run.output
    state = checkpoint(tmp_path / "out")
    decayed, kept = state["param_groups"]
    assert decayed["weight_decay"] == 0.1 and kept["weight_decay"] == 0.0
    shapes = [w.ndim for w in state["model"].values()]
    assert (len(decayed["params"]), len(kept["params"])) == (shapes.count(2), shapes.count(1))
    assert {w.ndim for w in state["exp_avg"].values()} == {1, 2}


def test_resume_is_exact_in_one_process(tmp_path, runner):
    """7 steps straight, or 4 then a rerun to 7 (which resumes: no --resume needed): the
    same losses and the same final weights, moments, EMA and schedule, bit for bit; the
    schedule warms up, then decays; the metrics have each step once."""
    import torch

    script = write_gpt(tmp_path, gpt_flags(("accum", "ema", "seed")))
    args = [*SIZES, "--batch-size", "2", "--log-every", "1", "--warmup-steps", "2"]
    args += ["--decay-steps", "7", "--ckpt-every", "2"]
    for out, steps in (("straight", 7), ("resumed", 4), ("resumed", 7)):
        run = runner.run(script, [*args, "--max-steps", str(steps), "--out", out])
        assert run.rc == 0, run.output
    assert "resumed from resumed/step-4.pt at step 4" in run.output
    straight, resumed = losses(tmp_path / "straight"), losses(tmp_path / "resumed")
    assert [resumed[s] for s in (5, 6, 7)] == [straight[s] for s in (5, 6, 7)]
    assert [r["step"] for r in metrics(tmp_path / "resumed")] == list(range(1, 8))
    a, b = checkpoint(tmp_path / "straight"), checkpoint(tmp_path / "resumed")
    for key in ("model", "exp_avg", "ema"):
        for name, value in a[key].items():
            assert torch.equal(value, b[key][name]), (key, name)
    assert a["scheduler"] == b["scheduler"] and a["step"] == b["step"] == 7
    # --keep 3: the newest three, from both runs; none deleted otherwise.
    assert sorted(p.name for p in (tmp_path / "resumed").glob("step-*")) == [
        "step-4.pt",
        "step-6.pt",
        "step-7.pt",
    ]

    # Warm-up over 2 steps, then a cosine to a tenth at step 7; each log record has the
    # learning rate of its step, so scheduler.step() ran after optimizer.step().
    lrs = [r["lr"] for r in metrics(tmp_path / "straight")]
    peak = lrs[1]
    expected = [0.5, 1.0] + [
        0.1 + 0.45 * (1 + math.cos(math.pi * (s - 2) / 5)) for s in range(2, 7)
    ]
    assert [lr / peak for lr in lrs] == pytest.approx(expected, rel=1e-9)


def test_a_longer_rerun_keeps_the_saved_schedule(tmp_path, runner):
    """4 steps (the cosine decays over them), then a rerun with --max-steps 6: the saved
    schedule goes on (the learning rate stays at its floor, a tenth, and does not jump back
    up), the log says so, and training stops at the new step count."""
    script = write_gpt(tmp_path, ["--model", "gpt"])
    args = [*SIZES, "--batch-size", "2", "--log-every", "1", "--warmup-steps", "1"]
    for steps in (4, 6):
        run = runner.run(script, [*args, "--max-steps", str(steps), "--out", "out"])
        assert run.rc == 0, run.output
    assert "the lr schedule ends at step 4, as it was saved" in run.output
    lrs = {r["step"]: r["lr"] for r in metrics(tmp_path / "out")}
    assert sorted(lrs) == [1, 2, 3, 4, 5, 6]

    def factor(s: int, total: int) -> float:  # the script's, warm-up over 1 step
        return 0.1 + 0.45 * (1 + math.cos(math.pi * min((s - 1) / (total - 1), 1))) if s else 1

    saved = [factor(s, 4) for s in range(6)]  # steps 5 and 6 at the floor: 0.1
    assert [lrs[s] / lrs[1] for s in range(1, 7)] == pytest.approx(saved, rel=1e-9)
    assert abs(lrs[5] / lrs[1] - factor(4, 6)) > 0.2  # what a re-stretched schedule gives
    assert checkpoint(tmp_path / "out")["step"] == 6


def test_export_weights_carry_the_configuration(tmp_path, runner):
    """--export-weights writes the last checkpoint's weights with the options that build
    the model: sizes, vocabulary and what the tokens are."""
    import torch

    script = write_gpt(tmp_path, ["--model", "gpt"])
    run = runner.run(script, [*SIZES, "--max-steps", "2", "--batch-size", "2", "--out", "out"])
    assert run.rc == 0, run.output
    run = runner.run(script, ["--export-weights", "model.pt", "--out", "out"])
    assert run.rc == 0, run.output
    exported = torch.load(tmp_path / "model.pt", weights_only=True)
    saved = checkpoint(tmp_path / "out")
    assert exported["model"].keys() == saved["model"].keys()
    assert all(torch.equal(exported["model"][k], saved["model"][k]) for k in saved["model"])
    config = exported["config"]
    assert (config["n_layer"], config["n_embd"], config["vocab_size"]) == (2, 32, 256)
    assert config["tokens"] == "bytes" and config == saved["config"]


#: The GPT script of `compose --model gpt --lr-schedule cosine --clip-grad-norm 1.0` before
#: issue 29 (commit f430754): its best recipe then, against which the default is measured.
BEFORE = Path(__file__).parent / "data" / "gpt_before_issue_29.txt"

#: Evaluates the weights of each checkpoint of its argument (JSON: name -> path) on the
#: same held-out batches, with the new script's evaluate(), and prints the losses.
EVAL_DRIVER = r"""
import json
import sys

import torch

import train

paths = json.loads(sys.argv[1])
args = train.parse_args(["--eval-tokens", str(2**18)])
tokens, held_out, vocab_size = train.load_data(args)
train.resolve(args, {}, vocab_size)
off = torch.autocast("cpu", enabled=False)
losses = {}
for name, path in paths.items():
    model = train.GPT(args)
    state = torch.load(path, weights_only=True)["model"]
    # The old script's MLP was an nn.Sequential (mlp.0, mlp.2); the new one names up and down.
    renamed = {".mlp.0.": ".up.", ".mlp.2.": ".down."}
    for old, new in renamed.items():
        state = {k.replace(old, new): v for k, v in state.items()}
    model.load_state_dict(state)
    losses[name] = train.evaluate(model, held_out, args, torch.device("cpu"), off)
print(json.dumps(losses))
"""


def test_the_default_recipe_learns_at_least_as_fast_as_before(tmp_path, runner):
    """The plain GPT script on its CPU preset and the built-in text, 300 steps: its held-out
    loss (256K tokens, both models on the same batches) is no higher than that of the old
    script's best recipe (cosine and clipping, which the old default lacked), and its
    training loss, logged every step, never rises above 1.5x its running minimum."""
    write_gpt(tmp_path, ["--model", "gpt"])
    (tmp_path / "before.py").write_text(BEFORE.read_text(encoding="utf-8"), encoding="utf-8")
    steps = ["--max-steps", "300", "--log-every", "1"]
    for name, extra in (("train.py", ["--eval-every", "0"]), ("before.py", [])):
        out = "new" if name == "train.py" else "old"
        run = runner.run(tmp_path / name, [*steps, *extra, "--out", out])
        assert run.rc == 0, run.output
    new = metrics(tmp_path / "new")
    assert abs(new[0]["loss"] - math.log(256)) < 0.1  # uniform over 256 bytes at first
    lowest = math.inf
    for record in new:
        lowest = min(lowest, record["loss"])
        assert record["loss"] <= 1.5 * lowest, (record, lowest)
    (tmp_path / "eval.py").write_text(EVAL_DRIVER, encoding="utf-8")
    paths = {"new": "new/step-300.pt", "old": "old/last.pt"}
    run = runner.run(tmp_path / "eval.py", [json.dumps(paths)])
    assert run.rc == 0, run.output
    held_out = json.loads(run.output.strip().splitlines()[-1])
    assert held_out["new"] <= held_out["old"] < 0.5 * new[0]["loss"], held_out
    print(f"held-out loss after 300 steps: {held_out}")


# --- the script's parts, from a driver that imports them -----------------------------------

FLOPS_DRIVER = r"""
import json
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

import full
import selective
import train

sys.argv = ["train.py", *sys.argv[1:]]
args = train.parse_args()
out = {}


def step_flops(model, x):
    with FlopCounterMode(display=False) as counter:
        train.F.cross_entropy(model(x).flatten(0, 1), x.flatten()).backward()
    return counter.get_total_flops()


def build(module):
    torch.manual_seed(0)
    return module.GPT(args)


x = torch.randint(args.vocab_size, (4, args.seq_len))
# The script's formula against the FLOPs FlopCounterMode counts for one step, attention
# through the math kernel (the CPU flash kernel has no FLOP formula).
model = build(train)
with sdpa_kernel(SDPBackend.MATH):
    counted = step_flops(model, x) / x.numel()
n_params = sum(p.numel() for n, p in model.named_parameters() if "pos_" not in n)
out["formula"] = 6 * n_params + 12 * args.n_layer * args.seq_len * args.n_embd
out["counted"] = counted

# Activation checkpointing: full recomputes the matmuls in backward, selective those it
# does not save (attention's CPU kernel counts no FLOPs either way); the gradients do
# not change.
grads = {}
for name, module in (("none", train), ("full", full), ("selective", selective)):
    model = build(module)
    out[name] = step_flops(model, x)
    grads[name] = torch.cat([p.grad.flatten() for p in model.parameters()])
out["grad_error"] = max(
    (grads[k] - grads["none"]).abs().max().item() for k in ("full", "selective")
) / grads["none"].abs().max().item()
print(json.dumps(out))
"""


def test_flop_formula_and_selective_checkpointing(tmp_path, runner):
    """The MFU's FLOP formula against FlopCounterMode; torchtitan's selective policy
    recomputes exactly the second matmul of each block (the output of the fourth, the
    other one it does not save, is not needed in backward)."""
    write_gpt(tmp_path, ["--model", "gpt"])
    write_gpt(tmp_path, ["--model", "gpt", "--activation-checkpointing"], "full.py")
    write_gpt(
        tmp_path, ["--model", "gpt", "--activation-checkpointing", "selective"], "selective.py"
    )
    driver = tmp_path / "driver.py"
    driver.write_text(FLOPS_DRIVER, encoding="utf-8")
    run = runner.run(driver, SIZES)
    assert run.rc == 0, run.output
    out = json.loads(run.output.strip().splitlines()[-1])
    assert math.isclose(out["formula"], out["counted"], rel_tol=0.05), out
    # FLOPs of a matmul's forward, per block: qkv 3, proj 1, MLP 4 and 4 (x 2 B T C^2).
    # Backward needs no output of the last one (MLP down): it is never recomputed.
    unit = 2 * 4 * 32 * 32**2  # B T C^2 of the driver's batch (4 x 32, width 32), x 2
    assert out["full"] - out["none"] == 2 * (3 + 1 + 4) * unit, out  # 2 blocks
    assert out["selective"] - out["none"] == 2 * 1 * unit, out  # proj only
    assert out["grad_error"] < 1e-6, out
