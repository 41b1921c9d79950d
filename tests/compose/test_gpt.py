"""compose --model gpt: every variant composes, lints clean (ruff and our own lint) and
trains; and the properties of the issue hold on CPU (gloo, fp32, small sizes): the global
batch is the unit however it is split, the initial weights do not depend on the world size
or FSDP, resume is exact (and N -> M ranks continues), SIGTERM saves, SIGKILL never tears a
checkpoint, the loss is the token mean of the global batch, the FLOP formula agrees with
FlopCounterMode, selective checkpointing recomputes no matmul.

All two-rank runs share one torchrun launch (`two_ranks`), which trains seven times."""

from __future__ import annotations

import json
import math
import os
import random
import signal
import time
from pathlib import Path

import pytest

from generator.compose.script import cited_tips, compose, read_tips_by_feature
from generator.lint import lint_source
from tests.compose.compose_cases import assert_refused_before_writing, options, ruff
from tests.compose.gpt_cases import (
    FULL_DDP,
    FULL_FSDP,
    GPT_SUPPORTED,
    GPT_UNSUPPORTED,
    MULTI_RUN,
    NOT_FOR_GPT,
    SIZES,
    checkpoint,
    finite,
    gpt_flags,
    losses,
    metrics,
    relative_error,
)

RUFF_RULES = "W,I,B,UP"  # on top of ruff's defaults
MAX_LINES = 600  # a composed script with every flag, docstring included


def write_gpt(folder: Path, composer_flags: list[str], name: str = "train.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(compose(options(composer_flags), read_tips_by_feature()), encoding="utf-8")
    return path


def check_gpt_source(script: Path, composer_flags: list[str]) -> None:
    """No template leftovers, every applicable tip cited, short lines, ruff and lint clean."""
    text = script.read_text(encoding="utf-8")
    for leftover in ("{{", "{%", "{#"):
        assert leftover not in text, f"template leftover {leftover!r}"
    cites = read_tips_by_feature()
    chosen = options(composer_flags).features()
    expected = {t for f in chosen for t in cites.get(f, [])} - NOT_FOR_GPT
    assert set(cited_tips(text)) == expected
    for number, line in enumerate(text.splitlines(), 1):
        if "# tip: " not in line and "python -m generator compose" not in line:
            assert len(line) <= 88, f"line {number} is {len(line)} characters long"
    lint = ruff("check", "--extend-select", RUFF_RULES, script.name, cwd=script.parent)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = ruff("format", "--check", "--diff", script.name, cwd=script.parent)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    findings = lint_source(text, str(script))
    assert findings == [], [f"{f.line}: {f.rule} {f.message}" for f in findings]


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
        assert len(script.read_text(encoding="utf-8").splitlines()) <= MAX_LINES

    # Batches of 6, as in the references below: a compiled graph then comes from the cache.
    args = [*SIZES, "--batch-size", "6", "--max-steps", "4", "--log-every", "2", "--out", "out"]
    if "lr-schedule" in features:
        args += ["--warmup-steps", "1"]
    run = runner.run(script, args)
    assert run.rc == 0, run.output
    records = metrics(tmp_path / "out")
    assert [r["step"] for r in records] == [2, 4], records
    assert finite([r["loss"] for r in records]) and records[1]["loss"] < records[0]["loss"]
    for r in records:
        assert r["tokens_per_s"] > 0 and r["tflops"] > 0 and r["mfu"] is None  # a CPU
        assert ("eval_loss" in r) == ("eval-every" in features)  # every 2 steps
        assert ("peak_memory_mib" in r) == ("memory-stats" in features)
        assert ("grad_norm" in r) == ("clip-grad-norm" in features)
    assert run.output.count("step ") >= 2 and "tokens_per_s" in run.output
    state = checkpoint(tmp_path / "out")
    assert state["step"] == 4
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


def test_full_scripts_fit_the_line_budget():
    """Either model with every flag: at most 600 lines, docstring included."""
    from tests.compose.compose_cases import FULL, flags

    for composer_flags in (flags(FULL), gpt_flags(FULL_FSDP), gpt_flags(FULL_DDP)):
        text = compose(options(composer_flags), read_tips_by_feature())
        assert len(text.splitlines()) <= MAX_LINES, composer_flags


# --- one process: references and the properties they show ----------------------------------

ONE_STEP = [*SIZES, "--max-steps", "1", "--log-every", "1", "--lr", "0"]


def one_step(runner, folder: Path, composer_flags: list[str], args: list[str]) -> dict:
    """One step at learning rate 0 (the weights stay the initial ones; AdamW's exp_avg is
    (1 - beta1) times the step's gradient): the checkpoint and the step's log record."""
    script = write_gpt(folder, ["--model", "gpt", *composer_flags])
    run = runner.run(script, [*ONE_STEP, *args, "--out", "out"])
    assert run.rc == 0, run.output
    return {**checkpoint(folder / "out"), "record": metrics(folder / "out")[0]}


@pytest.fixture(scope="module")
def refs(tmp_path_factory, runner):
    """One process, one micro-batch: global batches of 6 and 8, and 6 clipped to norm 0.05."""
    base = tmp_path_factory.mktemp("gpt-refs")
    return {
        "6": one_step(runner, base / "b6", [], ["--batch-size", "6"]),
        "8": one_step(runner, base / "b8", [], ["--batch-size", "8"]),
        "6-clip": one_step(
            runner, base / "clip", ["--clip-grad-norm", "0.05"], ["--batch-size", "6"]
        ),
    }


def assert_same_step(state: dict, ref: dict, tolerance: float = 1e-4) -> None:
    """Same initial weights (bit for bit), same gradients (exp_avg, relative to scale)
    and the same logged loss: the token mean over the whole global batch."""
    import torch

    for name, weight in ref["model"].items():
        assert torch.equal(state["model"][name], weight), name
    assert relative_error(state["exp_avg"], ref["exp_avg"]) <= tolerance
    assert math.isclose(state["record"]["loss"], ref["record"]["loss"], rel_tol=1e-5)


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
    """bf16 autocast: the same weights, a loss within 1% and gradients along the fp32 ones."""
    import torch

    state = one_step(runner, tmp_path, ["--amp"], ["--batch-size", "6"])
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


def test_no_decay_norm_bias_groups(tmp_path, runner):
    """Two groups: weight decay on every matrix, none on the norm gains."""
    script = write_gpt(tmp_path, ["--model", "gpt", "--no-decay-norm-bias"])
    run = runner.run(script, [*ONE_STEP, "--batch-size", "2", "--out", "out"])
    assert run.rc == 0, run.output
    state = checkpoint(tmp_path / "out")
    decayed, kept = state["param_groups"]
    assert decayed["weight_decay"] == 0.1 and kept["weight_decay"] == 0.0
    ndims = lambda group: {state["exp_avg"][i].ndim for i in group["params"]}  # noqa: E731
    assert ndims(decayed) == {2} and ndims(kept) == {1}
    shapes = [w.ndim for w in state["model"].values()]
    assert (len(decayed["params"]), len(kept["params"])) == (shapes.count(2), shapes.count(1))


def test_a_tiny_gpt_learns_the_built_in_text(tmp_path, runner):
    """The CPU preset trains on the built-in data, and its held-out loss falls by more
    than 30% from the initial loss within 150 steps (a few CPU-seconds)."""
    script = write_gpt(tmp_path, ["--model", "gpt", "--eval-every", "50"])
    run = runner.run(script, ["--max-steps", "150", "--log-every", "1", "--out", "out"])
    assert run.rc == 0, run.output
    records = metrics(tmp_path / "out")
    initial = records[0]["loss"]  # step 1's loss is the initial weights'
    assert abs(initial - math.log(256)) < 0.1  # near uniform over the 256 byte values
    evals = [r["eval_loss"] for r in records if "eval_loss" in r]
    assert len(evals) == 3 and evals[-1] < 0.7 * initial, (initial, evals)


def test_reads_token_files_and_text(tmp_path, runner):
    """--data: a nanoGPT .bin of uint16 token ids (GPT-2's vocabulary by default), and a
    UTF-8 text file, a token a byte; each trains, with its last tenth held out."""
    import numpy as np

    rng = np.random.default_rng(0)
    rng.integers(50257, size=20_000).astype(np.uint16).tofile(tmp_path / "tokens.bin")
    (tmp_path / "text.txt").write_text("the quick brown fox jumps over héhé\n" * 500)
    script = write_gpt(tmp_path, ["--model", "gpt", "--eval-every", "2"])
    sizes = SIZES[: SIZES.index("--vocab-size")]  # the vocabulary: the data's default
    for data, out in (("tokens.bin", "bin"), ("text.txt", "text")):
        args = [*sizes, "--data", data, "--batch-size", "2", "--max-steps", "2", "--out", out]
        run = runner.run(script, args)
        assert run.rc == 0, run.output
        records = metrics(tmp_path / out)
        assert finite([records[-1]["loss"], records[-1]["eval_loss"]])
        vocab = len(checkpoint(tmp_path / out)["model"]["tok_emb.weight"])
        assert vocab == (50304 if data.endswith(".bin") else 256)


def test_resume_is_exact_in_one_process(tmp_path, runner):
    """7 steps straight, or 4 then --resume to 7: the same losses and the same final
    weights, moments, EMA and schedule, bit for bit; the schedule warms up, then decays."""
    import torch

    script = write_gpt(
        tmp_path, gpt_flags(("accum", "lr-schedule", "ema", "seed", "clip-grad-norm"))
    )
    args = [*SIZES, "--batch-size", "2", "--log-every", "1", "--warmup-steps", "2"]
    args += ["--decay-steps", "7"]
    for out, steps, extra in (
        ("straight", 7, []),
        ("resumed", 4, []),
        ("resumed", 7, ["--resume"]),
    ):
        run = runner.run(script, [*args, "--max-steps", str(steps), "--out", out, *extra])
        assert run.rc == 0, run.output
    assert "resumed from resumed/last.pt at step 4" in run.output
    straight, resumed = losses(tmp_path / "straight"), losses(tmp_path / "resumed")
    assert [resumed[s] for s in (5, 6, 7)] == [straight[s] for s in (5, 6, 7)]
    a, b = checkpoint(tmp_path / "straight"), checkpoint(tmp_path / "resumed")
    for key in ("model", "exp_avg", "ema"):
        for name, value in a[key].items():
            assert torch.equal(value, b[key][name]), (key, name)
    assert a["scheduler"] == b["scheduler"] and a["step"] == b["step"] == 7

    # Warm-up over 2 steps, then a cosine to a tenth at step 7; each log record has the
    # learning rate of its step, so scheduler.step() ran after optimizer.step().
    lrs = [r["lr"] for r in metrics(tmp_path / "straight")]
    peak = lrs[1]
    expected = [0.5, 1.0] + [
        0.1 + 0.45 * (1 + math.cos(math.pi * (s - 2) / 5)) for s in range(2, 7)
    ]
    assert [lr / peak for lr in lrs] == pytest.approx(expected, rel=1e-9)


def test_export_weights_from_last_pt(tmp_path, runner):
    import torch

    script = write_gpt(tmp_path, ["--model", "gpt"])
    run = runner.run(script, [*SIZES, "--max-steps", "2", "--batch-size", "2", "--out", "out"])
    assert run.rc == 0, run.output
    run = runner.run(script, ["--export-weights", "model.pt", "--out", "out"])
    assert run.rc == 0, run.output
    exported = torch.load(tmp_path / "model.pt", weights_only=True)
    saved = checkpoint(tmp_path / "out")["model"]
    assert exported.keys() == saved.keys()
    assert all(torch.equal(exported[k], saved[k]) for k in saved)


# --- two ranks: one torchrun launch trains seven times --------------------------------------

RESUME_FLAGS = ("fsdp", "async-checkpoint", "accum", "lr-schedule", "ema")


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory, runner):
    """Every two-rank run, in one torchrun job: DDP 2 x 3, FSDP2 2 x 3 (clipped), FSDP2
    2 x accumulation 2 x 2, each one step at learning rate 0; and FSDP2 with async saves,
    accumulation, a schedule and an EMA: 7 steps straight, 4 steps twice (one copy is
    resumed here, the other in one process) and --resume to 7."""
    folder = tmp_path_factory.mktemp("two-ranks")
    write_gpt(folder, ["--model", "gpt", "--ddp"], "ddp.py")
    write_gpt(folder, ["--model", "gpt", "--fsdp", "--clip-grad-norm", "0.05"], "fsdp.py")
    write_gpt(folder, ["--model", "gpt", "--fsdp", "--accum", "2"], "fsdp_accum.py")
    write_gpt(folder, gpt_flags(RESUME_FLAGS), "resume.py")
    resume = [*SIZES, "--batch-size", "2", "--log-every", "1", "--warmup-steps", "2"]
    resume += ["--decay-steps", "7", "--ckpt-every", "2"]
    runs = [
        ("ddp", [*ONE_STEP, "--batch-size", "3", "--out", "ddp"]),
        ("fsdp", [*ONE_STEP, "--batch-size", "3", "--out", "fsdp"]),
        ("fsdp_accum", [*ONE_STEP, "--batch-size", "2", "--out", "fsdp-accum"]),
        ("resume", [*resume, "--max-steps", "7", "--out", "straight"]),
        ("resume", [*resume, "--max-steps", "4", "--out", "resumed"]),
        ("resume", [*resume, "--max-steps", "4", "--out", "to-one"]),
        ("resume", [*resume, "--max-steps", "7", "--out", "resumed", "--resume"]),
    ]
    driver = folder / "multi_run.py"
    driver.write_text(MULTI_RUN, encoding="utf-8")
    run = runner.run(driver, [json.dumps(runs)], nproc=2, timeout=400)
    assert run.rc == 0, run.output
    return folder, run.output


def test_ddp_and_fsdp_splits_are_one_batch(two_ranks, refs):
    """2 processes x 3 sequences under DDP and FSDP2, and FSDP2 2 x accumulation 2 x 2:
    the initial weights of one process without FSDP, the gradients of one batch of 6 (8),
    its token-mean loss logged once, by rank 0; clipping on DTensors uses the global norm."""
    folder, _ = two_ranks
    for out, ref in (("ddp", "6"), ("fsdp", "6-clip"), ("fsdp-accum", "8")):
        records = metrics(folder / out)
        assert len(records) == 1, records  # rank 0 alone writes the metrics
        assert_same_step({**checkpoint(folder / out), "record": records[0]}, refs[ref])
    clipped, ref = metrics(folder / "fsdp")[0], refs["6-clip"]["record"]
    assert clipped["grad_norm"] > 0.05  # it did clip
    assert math.isclose(clipped["grad_norm"], ref["grad_norm"], rel_tol=1e-5)


def test_fsdp_resume_is_exact_on_two_ranks(two_ranks):
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
    assert sorted(p.name for p in (folder / "resumed").iterdir() if "step" in p.name) == [
        "step-7"
    ]  # published by a rename; the older ones deleted


def test_two_rank_checkpoint_resumes_in_one_process(two_ranks, runner):
    """The 2-rank FSDP2 checkpoint at step 4 resumes in 1 process (the same global batch:
    1 x 2 x 4) and continues within 1e-4 of the 2-rank run; --export-weights then writes
    the EMA as one state dict for torch.load(weights_only=True)."""
    import torch

    folder, _ = two_ranks
    args = [*SIZES, "--batch-size", "4", "--log-every", "1", "--warmup-steps", "2"]
    args += ["--decay-steps", "7", "--max-steps", "7", "--out", "to-one", "--resume"]
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
    assert exported.keys() == ema.keys()
    assert all(torch.equal(exported[k], ema[k]) for k in ema)


# --- faults -----------------------------------------------------------------------------


def _text(log: Path) -> str:
    try:
        return log.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def _logged_steps(out: Path) -> int:
    try:
        return len((out / "metrics.jsonl").read_text().splitlines())
    except FileNotFoundError:
        return 0


def test_sigterm_saves_a_checkpoint_and_exits_0(tmp_path, runner):
    """FSDP2 with asynchronous saves, as a world of one: SIGTERM, the save is finished
    and published, exit status 0."""
    script = write_gpt(tmp_path, ["--model", "gpt", "--fsdp", "--async-checkpoint"])
    args = [*SIZES, "--batch-size", "2", "--log-every", "1", "--max-steps", "100000"]
    log = tmp_path / "run.log"
    pid = runner.start(script, [*args, "--out", "out"], log)
    deadline = time.monotonic() + 120
    while _logged_steps(tmp_path / "out") < 3:
        assert time.monotonic() < deadline, _text(log)
        time.sleep(0.02)
    os.kill(pid, signal.SIGTERM)
    run = runner.wait(pid, log, timeout=120)
    assert run.rc == 0, run.output
    saved = int(run.output.split("SIGTERM: saved a checkpoint at step ")[1].split(";")[0])
    assert checkpoint(tmp_path / "out")["step"] == saved >= 3


def test_sigkill_never_leaves_a_torn_checkpoint(tmp_path, runner):
    """Kill -9 at random moments while FSDP2 writes a checkpoint folder every step (most
    kills land in a write, leaving its temporary folder): the last published folder
    always loads, and --resume continues from it."""
    script = write_gpt(tmp_path, ["--model", "gpt", "--fsdp"])
    args = [*SIZES, "--batch-size", "2", "--ckpt-every", "1", "--log-every", "1"]
    args += ["--max-steps", "100000", "--out", "out"]
    rng = random.Random(0)
    step = interrupted = 0
    for kill in range(6):
        log = tmp_path / f"kill-{kill}.log"
        pid = runner.start(script, [*args, "--resume"] if kill else args, log)
        deadline = time.monotonic() + 120
        while f"step {step + 2} |" not in _text(log):  # 2 new steps
            assert time.monotonic() < deadline, _text(log)
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.05))
        os.kill(pid, signal.SIGKILL)
        run = runner.wait(pid, log)
        assert run.rc == -signal.SIGKILL, run.output
        interrupted += any((tmp_path / "out").glob(".step-*.tmp"))
        if kill:
            assert f"at step {step}\n" in run.output, run.output
        state = checkpoint(tmp_path / "out")  # never torn
        assert state["step"] >= step + 1
        step = state["step"]
    assert interrupted, "no kill landed while a checkpoint was being written"


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
    model = module.GPT(args)
    if hasattr(module, "apply_ac"):
        module.apply_ac(model)
    return model


x = torch.randint(args.vocab_size, (4, args.seq_len))
# The script's formula against the FLOPs FlopCounterMode counts for one step, attention
# through the math kernel (the CPU flash kernel has no FLOP formula).
model = build(train)
with sdpa_kernel(SDPBackend.MATH):
    counted = step_flops(model, x) / x.numel()
n_params = sum(p.numel() for n, p in model.named_parameters() if "pos_" not in n)
out["formula"] = 6 * n_params + 12 * args.n_layer * args.seq_len * args.n_embd
out["counted"] = counted

# Activation checkpointing: full recomputes the matmuls in backward, selective keeps them
# (attention's CPU kernel counts no FLOPs either way); the gradients do not change.
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
    assert out["selective"] == out["none"] < out["full"], out
    assert out["grad_error"] < 1e-6, out
