"""The composer: every supported combination composes, is ruff-clean and trains; the
properties a training script must have hold (global batch, exact resume, no torn
checkpoints, clean preemption); contradictions fail before anything is written."""

from __future__ import annotations

import json
import math
import os
import random
import shlex
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator import cli
from generator.compose.docs import expand_flag_tables
from generator.compose.script import (
    ComposeOptions,
    cited_tips,
    compose,
    expand_placeholders,
    read_tips_by_feature,
)
from tests.compose.compose_cases import (
    FEATURES,
    FULL,
    GLOBAL_BATCH,
    HELPERS_DRIVER,
    RUFF_RULES,
    SUPPORTED,
    UNSUPPORTED,
    WORKLOAD,
    assert_refused_before_writing,
    case_id,
    check_composed_source,
    flags,
    options,
    ruff,
    write_script,
)


def load(path: Path) -> dict:
    import torch

    return torch.load(path, map_location="cpu", weights_only=True)


def check_source(script: Path, features: tuple[str, ...]) -> None:
    """No template leftovers, every tip of every chosen feature cited, ruff clean."""
    check_composed_source(script, flags(features))


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
    # Achieved TFLOP/s in every log line; no MFU, since a CPU has no known peak.
    assert run.output.count(" TFLOP/s") == 4 and "MFU" not in run.output, run.output
    assert run.output.count("GFLOP per sample") == 1, run.output

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


def _line(lines: list[str], text: str, start: int = 0) -> int:
    return next(i for i, line in enumerate(lines) if text in line and i >= start)


def test_interactions_are_right_in_the_source():
    """What the runs cannot show: where each feature's code sits relative to the others."""
    lines = compose(options(["--amp", "--accum", "4", "--ddp"]), {}).splitlines()
    loop = _line(lines, "while step < args.max_steps")  # the training loop
    forward, backward = _line(lines, "model(x)", loop), _line(lines, ".backward()", loop)
    autocast = _line(lines, "with autocast:", loop)
    no_sync = _line(lines, "model.no_sync()", loop)
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
    assert "--nnodes" not in plain  # a script without --ddp runs on one machine


def test_multi_node_commands_in_the_docstring():
    """The DDP script's docstring gives a multi-node torchrun line that torchrun parses,
    and a SLURM job that launches it with SIGTERM sent to the job steps before the end."""
    from torch.distributed.run import parse_args

    doc = compose(options(["--ddp"]), {}).split('"""')[1]
    commands = doc.replace("\\\n", " ").splitlines()
    expected = {  # nnodes, nproc_per_node, rdzv_backend, rdzv_endpoint
        "    torchrun --nnodes": ("2", "8", "c10d", "HOST:29500"),
        "    srun torchrun": ("$SLURM_NNODES", "8", "c10d", "$head:29500"),
    }
    for start, values in expected.items():
        line = next(c for c in commands if c.startswith(start))
        args = parse_args(shlex.split(line.split("torchrun", 1)[1]))
        assert (args.nnodes, args.nproc_per_node, args.rdzv_backend, args.rdzv_endpoint) == values
        assert args.training_script == "train.py"
    assert "#SBATCH --signal=TERM@120" in doc and "#SBATCH --ntasks-per-node=1" in doc


def conv_net_flops(width: int, size: int, batch: int, classes: int = 10) -> int:
    """FLOPs of one training step of the default ConvNet, by hand: 2 per multiply-add."""

    def conv(c_in: int, c_out: int, side: int) -> int:  # a 3x3 convolution's forward
        return 2 * c_in * c_out * 9 * side * side * batch

    first = conv(3, width, size)
    rest = conv(width, 2 * width, size // 2) + conv(2 * width, 4 * width, size // 4)
    head = 2 * batch * 4 * width * classes
    # Backward computes the gradients of the weights and of the inputs (twice the
    # forward), except for the first layer: the images need no gradient.
    return 2 * first + 3 * rest + 3 * head


#: Datasheet dense peaks (bf16, tf32, fp32 TFLOP/s) by the names torch.cuda reports.
KNOWN_GPUS = {
    "NVIDIA H100 80GB HBM3": [989.4, 494.7, 66.9],
    "NVIDIA H100 PCIe": [756.5, 378.0, 51.0],
    "NVIDIA H100 NVL": [835.5, 417.5, 60.0],
    "NVIDIA H200": [989.4, 494.7, 66.9],
    "NVIDIA H200 NVL": [835.5, 417.5, 60.0],
    "NVIDIA B200": [2250.0, 1125.0, 75.0],
    "NVIDIA GB200": [2500.0, 1250.0, 80.0],
    "NVIDIA A100-SXM4-80GB": [312.0, 156.0, 19.5],
    "NVIDIA A100 80GB PCIe": [312.0, 156.0, 19.5],
    "NVIDIA L4": [121.0, 60.0, 30.3],
    "NVIDIA L40S": [362.1, 183.0, 91.6],
    "NVIDIA GeForce RTX 4090": [165.2, 82.6, 82.6],
    "NVIDIA A10": [125.0, 62.5, 31.2],
}
#: Names that must not borrow another GPU's peak.
UNKNOWN_GPUS = [
    "NVIDIA GH200 480GB",
    "NVIDIA B100",
    "NVIDIA L40",
    "NVIDIA A10G",
    "Tesla T4",
    "NVIDIA GeForce RTX 3090",
]


def test_measure_mfu_tip_agrees_with_the_composers_peaks() -> None:
    """The measure-mfu tip's peak table gives each GPU the composer's bf16 peak (to the
    rounding of the tip's whole TFLOP/s), and the composer knows every GPU the tip names."""
    import ast
    import re

    from generator.records.load import get_tip

    tree = ast.parse(get_tip("measure-mfu").after.code)
    wanted = {"PEAK_BF16_FLOPS", "datasheet_peak"}
    nodes = [
        n
        for n in tree.body
        if (
            isinstance(n, ast.Assign)
            and {t.id for t in n.targets if isinstance(t, ast.Name)} & wanted
        )
        or (isinstance(n, ast.FunctionDef) and n.name in wanted)
    ]
    assert len(nodes) == 2
    namespace: dict = {"re": re}  # the snippet's lookup matches whole words
    exec(compile(ast.Module(body=nodes, type_ignores=[]), "measure-mfu", "exec"), namespace)
    tip_peak = namespace["datasheet_peak"]
    named = 0
    for name, (bf16, _, _) in KNOWN_GPUS.items():
        peak = tip_peak(name)
        if peak is not None:
            named += 1
            assert abs(peak / 1e12 - bf16) < 1.0, (name, peak, bf16)
    for name in UNKNOWN_GPUS:
        assert tip_peak(name) is None, name
    # Every row of the tip's table is one of the composer's GPUs.
    assert named >= len(namespace["PEAK_BF16_FLOPS"]), named


def test_script_helpers(tmp_path, runner):
    """The FLOP count, the peak lookup, the speed text, batched reads and the presets."""
    write_script(tmp_path, [])
    driver = tmp_path / "driver.py"
    driver.write_text(HELPERS_DRIVER, encoding="utf-8")
    run = runner.run(driver, [*KNOWN_GPUS, *UNKNOWN_GPUS])
    assert run.rc == 0, run.output
    out = json.loads(run.output.strip().splitlines()[-1])

    # FlopCounterMode's count of one step equals the count by hand, and leaves no trace.
    assert out["flops"] == conv_net_flops(8, 8, 4)
    assert out["no_trace"] and out["bn_no_trace"]
    # MFU for a GPU in the table, TFLOP/s only for any other (and for a CPU).
    for name, peaks in KNOWN_GPUS.items():
        assert out["peaks"][name] == peaks, name
    for name in UNKNOWN_GPUS:
        assert out["peaks"][name] == [None, None, None], name
    assert out["cpu_peak"] is None
    assert out["speed_known"] == "450 TFLOP/s | MFU 45.0%"
    assert out["speed_unknown"] == "450 TFLOP/s"
    # A TensorDataset is read with one __getitem__ a batch; other datasets per sample.
    assert out["reads"] == [4, 64, 4] and out["same_batches"]
    # --preset auto: the gpu sizes on CUDA, the cpu sizes elsewhere; given sizes win;
    # the learning rate falls as 1/sqrt(width).
    assert out["presets"] == {
        "--device cuda": ["gpu", 256, 64, 256, 8192, 0.001061],
        "--device cpu": ["cpu", 32, 32, 32, 2048, 0.003],
        "--device cpu --preset gpu --width 16": ["gpu", 16, 64, 256, 8192, 0.004243],
    }


# --- contradictions and output ------------------------------------------------------------


@pytest.mark.parametrize(
    ("composer_flags", "message"),
    [(f, m) for _, f, m in UNSUPPORTED],
    ids=[name for name, _, _ in UNSUPPORTED],
)
def test_unsupported_combination_fails_before_writing(composer_flags, message, tmp_path, capsys):
    assert_refused_before_writing(composer_flags, message, tmp_path, capsys)


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


@pytest.mark.parametrize("model", ["convnet", "gpt"])
def test_compose_is_quick_and_does_not_import_torch(model):
    """Every flag of either model: well under a second of CPU, and no torch, NumPy or
    pydantic imported (the browser composer runs the same code in Pyodide)."""
    from tests.compose.gpt_cases import FULL_FSDP, gpt_flags

    code = (
        "import io, sys, time, contextlib\n"
        "from generator.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    assert main(['compose', *sys.argv[1:]]) == 0\n"
        "heavy = {'torch', 'numpy', 'pydantic', 'pydantic_core'} & set(sys.modules)\n"
        "assert not heavy, f'compose imported {heavy}'\n"
        'assert out.getvalue().startswith((\'"""\', \'r"""\'))\n'
        "print(time.process_time())\n"
    )
    argv = flags(FULL) if model == "convnet" else gpt_flags(FULL_FSDP)
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60
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
    ("composer_flags", "nproc", "batch", "script_args"),
    [
        (["--accum", "4"], 0, 8, []),
        (["--ddp"], 2, 16, []),
        (["--ddp", "--accum", "2"], 2, 8, []),
        (["--ddp"], 0, 32, []),
        ([], 0, 32, ["--data-on-device"]),
    ],
    ids=["accum-4x8", "ddp-2x16", "ddp+accum-2x2x8", "ddp-without-torchrun", "data-on-device"],
)
def test_global_batch_is_the_unit(
    composer_flags, nproc, batch, script_args, tmp_path, runner, reference_weights
):
    """Same seed, steps and global batch: the same weights, however the batch is split
    (and wherever the data are kept)."""
    script = write_script(tmp_path, [*EXACT, *composer_flags])
    args = [*SMALL, *script_args, "--batch-size", str(batch), "--max-steps", "6"]
    run = runner.run(script, args, nproc=nproc)
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


@pytest.mark.parametrize(
    ("features", "nproc", "signum"),
    [([], 0, signal.SIGINT), (["--ddp"], 2, signal.SIGTERM), (["--workers", "1"], 0, 0)],
    ids=["ctrl-c", "torchrun-one-worker", "process-group-with-workers"],
)
def test_a_signal_saves_at_the_step_boundary_and_exits_0(features, nproc, signum, tmp_path, runner):
    """Ctrl-C (SIGINT) in one process; SIGTERM to one torchrun worker (the processes must
    agree to stop together); SIGTERM to the whole process group, as SLURM and Kubernetes
    send it, which reaches the DataLoader workers too (they ignore it): each time the
    script saves at the end of a step and exits 0."""
    script = write_script(tmp_path, features)
    args = [*WORKLOAD, "--samples", "256", "--batch-size", "8", "--log-every", "1"]
    log = tmp_path / "run.log"
    pid = runner.start(script, [*args, "--max-steps", "100000", "--out", "out"], log, nproc)
    deadline = time.monotonic() + 120
    while "step      3 " not in _text(log):
        assert time.monotonic() < deadline, _text(log)
        time.sleep(0.02)
    if nproc:
        os.kill(max(_children(pid)), signum)
    elif signum:
        os.kill(pid, signum)
    else:
        assert _children(pid), "no DataLoader worker"
        os.killpg(pid, signal.SIGTERM)  # the run is its process group's leader
    run = runner.wait(pid, log, timeout=120)
    assert run.rc == 0, run.output
    said = "stopped by a signal: saved out/last.pt at step "
    saved = int(run.output.split(said)[1].split(";")[0])
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
    assert "<!-- compose-tool -->" in text  # the form and the live script (generator/site/tools.py)
    lang = " zh" if page.endswith(".zh.md") else ""
    assert f"<!-- compose-flags: convnet{lang} -->" in text
    text = expand_flag_tables(text)  # the flag tables, generated from the options
    for feature in FEATURES:
        assert f"--{feature}" in text, feature
    # The script's own options, the multi-node launch and the measured figures.
    for option in ("--preset", "--data-on-device", "--nnodes", "--rdzv-backend c10d"):
        assert option in text.replace("=", " "), option
    assert "#SBATCH --signal=TERM@120" in text
    for device in ("cpu", "cuda"):
        assert f"<!-- compose-results: {device}{lang} -->" in text


RESULTS = {
    "date": "2026-01-02",
    "device": "cuda",
    "device_name": "NVIDIA H100 80GB HBM3",
    "torch": "2.11.0+cu130",
    "lightning": "2.6.6",
    "workload": {"width": 256, "image_size": 64, "batch_size": 256, "gflop_per_sample": 14.6},
    "steps": 200,
    "warmup": 40,
    "repeats": 3,
    "measure": "samples per second of wall time",
    "ladder": [
        {"added": [], "samples_per_s": 8900.0, "speedup": 1.0, "tflops": 130.0, "mfu": 0.26},
        {
            "added": ["--amp"],
            "samples_per_s": 15700.0,
            "speedup": 1.764,
            "tflops": 229.2,
            "mfu": 0.232,
        },
    ],
    "comparison": [
        {
            "flags": [],
            "generated": 8900.0,
            "minimal": 8950.0,
            "lightning": 7000.0,
            "vs_minimal": 0.994,
            "vs_lightning": 1.271,
        },
        {
            "flags": ["--amp"],
            "generated": 15700.0,
            "minimal": 15600.0,
            "lightning": None,
            "vs_minimal": 1.006,
            "vs_lightning": None,
        },
    ],
    "command": "python benchmarks/compose_compare.py --device cuda",
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_results_placeholder_shows_what_each_flag_bought(lang, tmp_path):
    from generator.compose.results import expand_results

    suffix = "" if lang == "en" else " zh"
    page = f"a\n<!-- compose-results: cuda{suffix} -->\n<!-- compose-results: cpu{suffix} -->\nb\n"
    (tmp_path / "compose-cuda.json").write_text(json.dumps(RESULTS), encoding="utf-8")
    text = expand_results(page, tmp_path)
    assert text.startswith("a\n") and text.endswith("\nb\n") and "<!--" not in text
    cuda, cpu = text.split("benchmarks/compose_compare.py --device cuda`")
    assert "NVIDIA H100 80GB HBM3" in cuda and "| `--amp` | 15,700 | 1.76× | 229 | 23% |" in cuda
    assert "| 8,900 | 15,700 |" in cuda and "| 0.994 | 1.006 |" in cuda
    assert "| 1.271 | – |" in cuda  # a figure not measured is a dash
    # No figures for the CPU: the line says which command writes them.
    assert "python benchmarks/compose_compare.py --device cpu" in cpu and "|" not in cpu
