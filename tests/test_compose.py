"""The composer: every supported combination composes, is ruff-clean and trains; the
properties a training script must have hold (global batch, exact resume, no torn
checkpoints, clean preemption); contradictions fail before anything is written."""

from __future__ import annotations

import json
import math
import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator import cli
from generator.compose import (
    ComposeOptions,
    cited_tips,
    compose,
    expand_placeholders,
    read_tips_by_feature,
)
from tests.compose_cases import (
    FEATURES,
    FULL,
    GLOBAL_BATCH,
    SUPPORTED,
    UNSUPPORTED,
    WORKLOAD,
    ScriptRunner,
    case_id,
    flags,
    options,
    ruff,
    write_script,
)

RUFF_RULES = "W,I,B,UP"  # on top of ruff's defaults


@pytest.fixture(scope="session")
def runner():
    runner = ScriptRunner()
    yield runner
    runner.close()


def load(path: Path) -> dict:
    import torch

    return torch.load(path, map_location="cpu", weights_only=True)


def check_source(script: Path, features: tuple[str, ...]) -> None:
    """No template leftovers, every tip of every chosen feature cited, ruff clean."""
    text = script.read_text(encoding="utf-8")
    for leftover in ("{{", "{%", "{#"):
        assert leftover not in text, f"template leftover {leftover!r}"
    cites = read_tips_by_feature()
    expected = {t for f in ("always", *features) for t in cites.get(f, [])}
    assert set(cited_tips(text)) == expected
    for number, line in enumerate(text.splitlines(), 1):
        if "# tip: " not in line and "python -m generator compose" not in line:
            assert len(line) <= 88, f"line {number} is {len(line)} characters long"
    lint = ruff("check", "--extend-select", RUFF_RULES, script.name, cwd=script.parent)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = ruff("format", "--check", "--diff", script.name, cwd=script.parent)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


# --- every combination --------------------------------------------------------------------


@pytest.mark.parametrize("features", SUPPORTED, ids=[case_id(c) for c in SUPPORTED])
def test_combination_composes_and_trains(features, tmp_path, runner):
    script = write_script(tmp_path, flags(features))
    check_source(script, features)

    nproc = 2 if "ddp" in features else 0
    accum = 2 if "accum" in features else 1
    batch = GLOBAL_BATCH // max(nproc, 1) // accum
    args = [*WORKLOAD, "--samples", "512", "--batch-size", str(batch), "--max-steps", "16"]
    run = runner.run(script, [*args, "--log-every", "4", "--out", "out"], nproc=nproc)
    assert run.rc == 0, run.output
    assert len(run.losses) == 4, run.output  # one log line per interval, on rank 0 only
    assert all(math.isfinite(v) for v in run.losses), run.output
    assert run.losses[-1] < run.losses[0] - 0.05, run.losses

    ckpt = load(tmp_path / "out" / "last.pt")
    assert ckpt["step"] == 16
    assert not any(k.startswith(("module.", "_orig_mod.")) for k in ckpt["model"])
    if "eval-every" in features:
        assert len(run.accuracies) == 4
        assert run.accuracies[-1] > max(run.accuracies[0], 0.2), run.accuracies
    if "memory-stats" in features:
        assert "peak memory" in run.output
    if "profile" in features:
        name = "trace-rank1.json" if nproc else "trace.json"
        trace = json.loads((tmp_path / "out" / name).read_text())
        assert trace["traceEvents"]
    if "amp" in features:
        assert "scaler" in ckpt  # auto: bf16 on CPU, the GradScaler saved but disabled


def test_fp16_scaler_unscales_before_clipping(tmp_path, runner):
    """fp16 runs on CPU too: the GradScaler path (scale, unscale_, clip, step) trains."""
    composer_flags = ["--amp", "--amp-dtype", "fp16", "--accum", "2", "--clip-grad-norm", "1.0"]
    script = write_script(tmp_path, composer_flags)
    check_source(script, ("amp", "accum", "clip-grad-norm"))
    text = script.read_text(encoding="utf-8")
    assert text.index("scaler.unscale_(optimizer)") < text.index("clip_grad_norm_")
    args = [*WORKLOAD, "--samples", "512", "--batch-size", "16", "--max-steps", "16"]
    run = runner.run(script, [*args, "--log-every", "4", "--out", "out"])
    assert run.rc == 0, run.output
    assert run.losses[-1] < run.losses[0] - 0.05, run.losses
    assert load(tmp_path / "out" / "last.pt")["scaler"]["scale"] > 1


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _line(lines: list[str], text: str) -> int:
    return next(i for i, line in enumerate(lines) if text in line)


def test_interactions_are_right_in_the_source():
    """What the runs cannot show: where each feature's code sits relative to the others."""
    lines = compose(options(["--amp", "--accum", "4", "--ddp"]), {}).splitlines()
    forward, backward = _line(lines, "model(x)"), _line(lines, ".backward()")
    autocast, no_sync = _line(lines, "with autocast:"), _line(lines, "model.no_sync()")
    # no_sync() is entered before the forward pass and still holds during backward().
    assert no_sync < autocast < forward < backward
    assert _indent(lines[backward]) > _indent(lines[no_sync])
    # autocast covers the forward pass and the loss, not backward().
    assert _indent(lines[forward]) > _indent(lines[autocast]) == _indent(lines[backward])
    assert "/ accum_steps" in lines[forward]

    bf16 = compose(options(["--amp", "--amp-dtype", "bf16", "--clip-grad-norm", "1"]), {})
    assert "GradScaler" not in bf16 and "scaler" not in bf16  # bf16 needs no loss scaling
    plain = compose(options([]), {})
    for absent in ("autocast", "scaler", "no_sync", "dist.", "accum_steps", "profiler"):
        assert absent not in plain  # no dead branches for features not chosen
    assert "weights_only=True" in plain and "zero_grad(set_to_none=True)" in plain


# --- contradictions and output ------------------------------------------------------------


@pytest.mark.parametrize(
    ("composer_flags", "message"),
    [(f, m) for _, f, m in UNSUPPORTED],
    ids=[name for name, _, _ in UNSUPPORTED],
)
def test_unsupported_combination_fails_before_writing(composer_flags, message, tmp_path, capsys):
    out = tmp_path / "train.py"
    assert cli.main(["compose", *composer_flags, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_output_is_atomic_and_never_overwritten_without_force(tmp_path, capsys):
    out = tmp_path / "sub" / "train.py"
    assert cli.main(["compose", "--amp", "-o", str(out)]) == 0
    first = out.read_text(encoding="utf-8")
    assert cli.main(["compose", "--amp"]) == 0
    captured = capsys.readouterr()
    assert captured.out == first  # without -o the script goes to stdout
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~_umask()

    assert cli.main(["compose", "--ddp", "-o", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == first
    assert cli.main(["compose", "--ddp", "-o", str(out), "--force"]) == 0
    assert "DistributedDataParallel" in out.read_text(encoding="utf-8")
    assert sorted(p.name for p in out.parent.iterdir()) == ["train.py"]  # no temp file left


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_help_documents_every_flag_with_its_tips():
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "compose", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    for feature in FEATURES:
        assert f"--{feature}" in text
    for ids in read_tips_by_feature().values():
        for tip_id in ids:
            assert tip_id in text


def test_compose_is_quick_and_does_not_import_torch():
    code = (
        "import io, sys, time, contextlib\n"
        "from generator.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    assert main(['compose', *sys.argv[1:]]) == 0\n"
        "assert 'torch' not in sys.modules, 'compose imported torch'\n"
        'assert out.getvalue().startswith(\'"""\')\n'
        "print(time.process_time())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *flags(FULL)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout) < 0.5, f"compose took {proc.stdout.strip()} s of CPU"


def test_composes_without_any_tip(tmp_path):
    """A feature that no tip declares yet is applied uncited."""
    script = tmp_path / "train.py"
    script.write_text(compose(options(flags(FULL)), {}), encoding="utf-8")
    assert cited_tips(script.read_text(encoding="utf-8")) == []
    lint = ruff("check", "--extend-select", RUFF_RULES, script.name, cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout
    assert ruff("format", "--check", script.name, cwd=tmp_path).returncode == 0


def test_command_round_trips():
    o = options(flags(FULL))
    assert options(o.flags()) == o
    assert ComposeOptions().command() == "python -m generator compose"


# --- properties of the training script ----------------------------------------------------

EXACT = ["--deterministic"]  # the properties are checked in fp32, deterministic
SMALL = [*WORKLOAD, "--samples", "128", "--log-every", "3", "--out", "out"]


@pytest.fixture(scope="module")
def reference_weights(tmp_path_factory, runner):
    """6 steps of the plain script, one process, batch 32 (the batch spans 1.5 epochs)."""
    script = write_script(tmp_path_factory.mktemp("reference"), EXACT)
    run = runner.run(script, [*SMALL, "--batch-size", "32", "--max-steps", "6"])
    assert run.rc == 0, run.output
    return load(script.parent / "out" / "last.pt")["model"]


@pytest.mark.parametrize(
    ("composer_flags", "nproc", "batch"),
    [
        (["--accum", "4"], 0, 8),
        (["--ddp"], 2, 16),
        (["--ddp", "--accum", "2"], 2, 8),
        (["--ddp"], 0, 32),
    ],
    ids=["accum-4x8", "ddp-2x16", "ddp+accum-2x2x8", "ddp-without-torchrun"],
)
def test_global_batch_is_the_unit(
    composer_flags, nproc, batch, tmp_path, runner, reference_weights
):
    """Same seed, steps and global batch: the same weights, however the batch is split."""
    script = write_script(tmp_path, [*EXACT, *composer_flags])
    run = runner.run(script, [*SMALL, "--batch-size", str(batch), "--max-steps", "6"], nproc=nproc)
    assert run.rc == 0, run.output
    weights = load(tmp_path / "out" / "last.pt")["model"]
    for name, ref in reference_weights.items():
        assert (weights[name] - ref).abs().max().item() < 1e-5, name


@pytest.mark.parametrize(
    ("samples", "stop"),
    [(136, 3), (56, 3)],
    ids=["mid-epoch", "epoch-boundary"],
)
def test_resume_is_exact(samples, stop, tmp_path, runner):
    """6 steps straight equal `stop` steps, a stop, then --resume to 6: bit for bit.

    With --accum 2 and batches of 8, 136 samples make 17 micro-batches an epoch (8 steps
    and a skipped partial group: step 3 falls mid-epoch), 56 make 7 (3 steps an epoch).
    """
    script = write_script(tmp_path, [*EXACT, "--seed", "0", "--accum", "2"])
    args = [*WORKLOAD, "--samples", str(samples), "--batch-size", "8", "--log-every", "1"]
    straight = runner.run(script, [*args, "--max-steps", "6", "--out", "straight"])
    assert straight.rc == 0, straight.output
    first = runner.run(script, [*args, "--max-steps", str(stop), "--out", "resumed"])
    assert first.rc == 0, first.output
    second = runner.run(script, [*args, "--max-steps", "6", "--out", "resumed", "--resume"])
    assert second.rc == 0, second.output
    assert f"resumed from resumed/last.pt at step {stop}" in second.output
    assert second.losses == straight.losses[stop:]

    a, b = load(tmp_path / "straight" / "last.pt"), load(tmp_path / "resumed" / "last.pt")
    assert a["step"] == b["step"] == 6 and a["position"] == b["position"]
    import torch

    for name in a["model"]:
        assert torch.equal(a["model"][name], b["model"][name]), name
    for state_a, state_b in zip(
        a["optimizer"]["state"].values(), b["optimizer"]["state"].values(), strict=True
    ):
        assert all(torch.equal(state_a[k], state_b[k]) for k in state_a)
    assert torch.equal(a["rng"]["torch"], b["rng"]["torch"])
    assert a["rng"]["python"] == b["rng"]["python"]


def test_sigkill_never_leaves_a_torn_checkpoint(tmp_path, runner):
    """Kill -9 at random moments while a checkpoint is written every step: last.pt always
    loads, and --resume always continues from it."""
    script = write_script(tmp_path, ["--accum", "2"])
    args = [*WORKLOAD, "--samples", "256", "--batch-size", "4", "--ckpt-every", "1"]
    args += ["--log-every", "1", "--max-steps", "100000", "--out", "out"]
    ckpt = tmp_path / "out" / "last.pt"
    rng = random.Random(0)
    step = 0
    for kill in range(10):
        log = tmp_path / f"kill-{kill}.log"
        pid = runner.start(script, [*args, "--resume"] if kill else args, log)
        deadline = time.monotonic() + 120
        while f"step {step + 2:6d} " not in _text(log):  # 2 new steps
            assert time.monotonic() < deadline, _text(log)
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.05))
        os.kill(pid, signal.SIGKILL)
        run = runner.wait(pid, log)
        assert run.rc == -signal.SIGKILL, run.output
        if kill:
            assert f"resumed from out/last.pt at step {step}" in run.output
        state = load(ckpt)  # never torn
        assert state["step"] >= step + 1
        step = state["step"]
    final = runner.run(
        script, [*args[:-4], "--max-steps", str(step + 2), "--out", "out", "--resume"]
    )
    assert final.rc == 0 and f"resumed from out/last.pt at step {step}" in final.output
    assert load(ckpt)["step"] == step + 2


@pytest.mark.parametrize("nproc", [0, 2], ids=["single", "torchrun"])
def test_sigterm_saves_at_the_step_boundary_and_exits_0(nproc, tmp_path, runner):
    features = ["--ddp"] if nproc else []
    script = write_script(tmp_path, features)
    args = [*WORKLOAD, "--samples", "256", "--batch-size", "8", "--log-every", "1"]
    log = tmp_path / "run.log"
    pid = runner.start(script, [*args, "--max-steps", "100000", "--out", "out"], log, nproc)
    deadline = time.monotonic() + 120
    while "step      3 " not in _text(log):
        assert time.monotonic() < deadline, _text(log)
        time.sleep(0.02)
    # Under torchrun, signal one worker only: the processes must agree to stop together.
    os.kill(max(_children(pid)) if nproc else pid, signal.SIGTERM)
    run = runner.wait(pid, log, timeout=120)
    assert run.rc == 0, run.output
    assert "SIGTERM: saved out/last.pt at step" in run.output
    saved = int(run.output.split("SIGTERM: saved out/last.pt at step ")[1].split(";")[0])
    assert load(tmp_path / "out" / "last.pt")["step"] == saved


def _text(log: Path) -> str:
    """What a run has written so far (nothing before it has started)."""
    try:
        return log.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


# --- the docs page ------------------------------------------------------------------------


def test_placeholders_expand_to_the_composed_script():
    cites = read_tips_by_feature()
    page = "intro\n<!-- compose: --amp --accum 4 --ddp -->\nend\n"
    expected = compose(options(["--amp", "--accum", "4", "--ddp"]), cites)
    assert expand_placeholders(page, cites) == f"intro\n``` python\n{expected}```\nend\n"


@pytest.mark.parametrize("page", ["composer.md", "composer.zh.md"])
def test_docs_page_lists_every_flag(page):
    from generator import paths

    text = (paths.DOCS / page).read_text(encoding="utf-8")
    assert "<!-- compose: --amp --accum 4 --ddp -->" in text
    for feature in FEATURES:
        assert f"--{feature}" in text, feature
