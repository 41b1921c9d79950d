"""What the composed GPT train.py costs over a minimal hand-written GPT loop.

Composes `python -m generator compose --model gpt FLAGS`, then measures, in one run on one
machine, the training throughput (tokens) of

* the generated script at the device's preset (CPU: 2 blocks of width 64 on sequences of
  64, batches of 16; CUDA: GPT-2 small, 12 blocks of width 768 on sequences of 1024,
  batches of 32), and
* a minimal loop on the same model, data and optimizer, imported from the generated
  script: draw the step's batch, forward (under bf16 autocast on CUDA, as the script's
  default recipe), loss, backward, AdamW step (fused with --fused-optimizer), zero_grad;
  the model compiled whole with --compile. Nothing else: no clipping, schedule or check
  for non-finite gradients, which the generated script's recipe adds: the floor of what
  any trainer can do.

Both report every 20 steps, timed as each report arrives after a warm-up (compose_runs.py):
tokens per CPU-second on a CPU, with one thread; tokens per second of wall time on CUDA.
Runs alternate (generated, minimal, minimal, generated, ...). The generated script's MFU
is read from its metrics.jsonl. Results go to benchmarks/results/compose-gpt-<device>.json.
This is a benchmark, not a test: run it by hand.

    python benchmarks/compose_gpt.py                       # CPU, plain script
    python benchmarks/compose_gpt.py --device cuda --flags "--compile --fused-optimizer"

Targets: generated / minimal >= 0.98 (CPU and GPU); MFU >= 40% on an H100 (GPU).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compose_runs import (  # noqa: E402
    EVERY,
    Measurement,
    add_run_arguments,
    cpu_model,
    environment,
    settle_run_arguments,
)

from generator.compose.flags import parse_flags  # noqa: E402
from generator.compose.script import compose, read_tips_by_feature  # noqa: E402

#: The floor, on the generated script's model, data and optimizer settings.
MINIMAL = r"""
import sys

import torch
import torch.nn.functional as F

import train

device, preset, steps, every, lr, flags = sys.argv[1:7]
steps, every, lr, flags = int(steps), int(every), float(lr), flags.split(",")
args = train.parse_args(["--device", device, "--preset", preset])
device = torch.device(device)
tokens, _, vocab_size = train.load_data(args)  # the generated script's training part
train.resolve(args, None, vocab_size)
model = train.GPT(args).to(device)
train.init_weights(model, 0)
fused = {"fused": True} if "fused-optimizer" in flags else {}
optimizer = torch.optim.AdamW(
    train.param_groups(model), lr, train.betas, weight_decay=train.weight_decay, **fused
)
if "compile" in flags:
    model = torch.compile(model)
# bf16 on CUDA, as the generated script's default (fp32 on a CPU)
amp = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")
for step in range(steps):
    x, y = train.get_batch(tokens, args, (0, step), args.batch_size, device)
    with amp:
        loss = F.cross_entropy(model(x).flatten(0, 1).float(), y.flatten())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if (step + 1) % every == 0:  # reports like the generated script's log lines
        print(f"step {step + 1} | loss {loss.item():.4f} | tokens_per_s", flush=True)
"""


def run(kind: str, folder: Path, args: argparse.Namespace, env: dict[str, str]) -> tuple:
    """Run one loop; return (tokens/s by the device's measure, wall tokens/s, MFU or None)."""
    total = args.warmup + args.steps
    if kind == "generated":
        shutil.rmtree(folder / "out", ignore_errors=True)
        argv = [sys.executable, "train.py", "--device", args.device, "--out", "out"]
        argv += ["--preset", args.preset, "--lr", str(args.lr), "--ckpt-every", "0"]
        argv += ["--eval-every", "0"]
        argv += ["--max-steps", str(total), "--log-every", str(EVERY)]
    else:
        argv = [sys.executable, "minimal.py", args.device, args.preset]
        argv += [str(v) for v in (total, EVERY, args.lr, ",".join(args.features))]
    measurement = Measurement(argv, folder, env, marker="tokens_per_s")
    skip, tokens = args.warmup // EVERY - 1, EVERY * args.tokens_per_step
    mfu = None
    if kind == "generated":
        records = [json.loads(line) for line in (folder / "out" / "metrics.jsonl").open()]
        measured = [r["mfu"] for r in records[skip + 1 :] if r["mfu"] is not None]
        mfu = statistics.median(measured) if measured else None
    return measurement.rate(args.device, skip, tokens), measurement.wall_rate(skip, tokens), mfu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, warmup=40)
    parser.add_argument("--pairs", type=int, default=6, help="generated/minimal run pairs")
    parser.add_argument("--flags", default="", help="composer flags, e.g. '--amp --compile'")
    args = parser.parse_args()
    default = ROOT / "benchmarks" / "results" / f"compose-gpt-{args.device}.json"
    output = settle_run_arguments(parser, args, default)
    args.lr = 1e-4  # small: the runs measure speed, and a long run must not diverge
    composer_flags = ["--model", "gpt", *shlex.split(args.flags)]
    options = parse_flags(composer_flags)
    args.features = [f for f in options.features() if f not in ("always", "gpt")]
    import torch  # after the argument checks: --help stays fast

    folder = Path(tempfile.mkdtemp(prefix="compose-gpt-"))
    (folder / "train.py").write_text(compose(options, read_tips_by_feature()), encoding="utf-8")
    (folder / "minimal.py").write_text(MINIMAL, encoding="utf-8")
    sys.path.insert(0, str(folder))
    import train  # the preset's sizes

    sizes = dict(zip(train.SIZES, train.presets[args.preset], strict=True))
    args.tokens_per_step = sizes["batch_size"] * sizes["seq_len"]

    env = environment(args.device, args.threads)
    measured: dict[str, list[float]] = {"generated": [], "minimal": []}
    wall: dict[str, list[float]] = {"generated": [], "minimal": []}
    mfus: list[float] = []
    unit = "tokens/s" if args.device == "cuda" else "tokens per CPU-second"
    try:
        for i in range(args.pairs):
            for kind in ["generated", "minimal"] if i % 2 == 0 else ["minimal", "generated"]:
                rate, per_second, mfu = run(kind, folder, args, env)
                measured[kind].append(rate)
                wall[kind].append(per_second)
                if mfu is not None:
                    mfus.append(mfu)
            print(
                f"pair {i + 1}/{args.pairs}: generated {measured['generated'][-1]:,.0f}, "
                f"minimal {measured['minimal'][-1]:,.0f} {unit}",
                flush=True,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    generated = statistics.median(measured["generated"])
    minimal = statistics.median(measured["minimal"])
    pairs = [g / m for g, m in zip(measured["generated"], measured["minimal"], strict=True)]
    result = {
        "date": datetime.date.today().isoformat(),
        "device": args.device,
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "threads": args.threads,
        "gpu": torch.cuda.get_device_name() if args.device == "cuda" else None,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "composer": " ".join(["python -m generator compose", *composer_flags]),
        "workload": f"train.py's {args.preset} preset: {sizes}; AdamW (lr {args.lr}); "
        f"{args.pairs} pair(s) of runs, each measured over {args.steps} steps after "
        f"{args.warmup}",
        "measure": "tokens per CPU-second of the training loop (median over runs)"
        if args.device == "cpu"
        else "tokens per second of wall time, each interval ending in a sync (median)",
        "generated_tokens_per_s": round(generated, 1),
        "minimal_tokens_per_s": round(minimal, 1),
        "ratio": round(generated / minimal, 4),
        "target_ratio": 0.98,
        "median_pair_ratio": round(statistics.median(pairs), 4),
        "pair_ratio_range": [round(min(pairs), 4), round(max(pairs), 4)],
        "mfu": round(statistics.median(mfus), 4) if mfus else None,
        "target_mfu_h100": 0.40 if args.device == "cuda" else None,
        "wall_generated_tokens_per_s": round(statistics.median(wall["generated"]), 1),
        "wall_minimal_tokens_per_s": round(statistics.median(wall["minimal"]), 1),
        "runs": {k: [round(v, 1) for v in vs] for k, vs in measured.items()},
        "command": " ".join(["python benchmarks/compose_gpt.py", *sys.argv[1:]]),
    }
    output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    mfu = "" if result["mfu"] is None else f", MFU {result['mfu']:.1%}"
    print(
        f"generated {generated:,.0f}, minimal loop {minimal:,.0f} {unit}: ratio "
        f"{result['ratio']}{mfu}; wrote {output}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
