"""What each composer flag buys, and the composed train.py against the alternatives.

One invocation, on one device, with the same model, data and optimizer settings throughout
(the workload of the generated script at the device's preset: on CUDA a conv net of width
256 on 64x64 images in batches of 256; on a CPU the small one). It measures

* the ladder: the generated script with speed flags added one at a time (on CUDA:
  --cudnn-benchmark, --amp, --channels-last, --compile, --fused-optimizer, then the
  script's --data-on-device option; on a CPU the ones that can act there);
* the comparison, with no speed flag and with all of them: the generated script (its
  ladder runs), a minimal hand-written loop (loops/minimal_loop.py: direct indexing with
  a seeded permutation, forward, loss, backward, step, nothing else) and Lightning's
  Trainer with the equivalent flags (loops/lightning_loop.py: precision="bf16-mixed",
  the network compiled in place, fused AdamW, benchmark=True).

Throughput is samples per second of wall time on CUDA, samples per CPU-second on a CPU
(see compose_runs.py), after a warm-up that also covers compilation; median over runs,
which alternate in order. Results go to benchmarks/results/compose-<device>.json, which
the composer page shows. Lightning comes with the `bench` extra
(`pip install -e '.[bench]'`); without it the Lightning column is left empty. This is a
benchmark, not a test: run it by hand, on an otherwise idle machine for GPU figures.

    python benchmarks/compose_compare.py --device cuda            # about 15 min on an H100
    python benchmarks/compose_compare.py --device cpu             # about 30 min on 2 cores
    python benchmarks/compose_compare.py --device cpu --quick     # a rough figure

Targets on an H100-class GPU (benchmark figures, not tests): generated >= 0.98x the
minimal loop and >= 1.2x Lightning; MFU >= 40% with all speed flags.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import re
import runpy
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compose_runs import (  # noqa: E402
    EVERY,
    MEASURES,
    Measurement,
    add_run_arguments,
    cpu_model,
    environment,
    settle_run_arguments,
)

from generator.compose.script import compose, parse_flags, read_tips_by_feature  # noqa: E402

#: Flags added in turn, per device. --data-on-device is an option of the script (and of
#: the two loops), not a composer flag. On a CPU, cuDNN and data placement do nothing.
LADDER = {
    "cuda": [
        "--cudnn-benchmark",
        "--amp",
        "--channels-last",
        "--compile",
        "--fused-optimizer",
        "--data-on-device",
    ],
    "cpu": ["--amp", "--channels-last", "--compile", "--fused-optimizer"],
}
RUNTIME = {"--data-on-device"}  # passed to the script when it runs, not to the composer
LOOPS = Path(__file__).resolve().parent / "loops"
TARGETS = {"vs_minimal": 0.98, "vs_lightning": 1.2, "mfu": 0.40}  # on an H100-class GPU


def rungs(device: str) -> list[list[str]]:
    """The flag sets of the ladder: none, then one more flag each."""
    added = LADDER[device]
    return [added[:i] for i in range(len(added) + 1)]


def compose_script(folder: Path, flags: list[str]) -> Path:
    """Write the script composed with ``flags`` (script options left out) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    composer_flags = [f for f in flags if f not in RUNTIME]
    text = compose(parse_flags(composer_flags), read_tips_by_feature())
    (folder / "train.py").write_text(text, encoding="utf-8")
    return folder / "train.py"


class Bench:
    """Runs the three loops with the same settings and collects their rates."""

    def __init__(self, args: argparse.Namespace, folder: Path) -> None:
        self.args = args
        self.folder = folder
        self.env = environment(args.device, args.threads)
        self.total = args.warmup + args.steps
        self.skip = args.warmup // EVERY - 1  # reports before the measured interval
        self.common = ["--device", args.device, "--preset", args.preset, "--lr", str(args.lr)]
        # The workload's sizes, from the generated script itself (the loops import them).
        script = compose_script(folder / "loops", [])
        for source in LOOPS.glob("*.py"):
            shutil.copy(source, script.parent / source.name)
        self.sizes = runpy.run_path(str(script), run_name="train")["presets"][args.preset]
        self.batch = self.sizes["batch_size"]

    def generated(self, flags: list[str]) -> tuple[float, dict[str, float | None]]:
        """Train the script composed with ``flags``; its rate, and what its log says."""
        folder = self.folder / ("gen-" + ("-".join(f.strip("-") for f in flags) or "plain"))
        script = compose_script(folder, flags)
        argv = [sys.executable, script.name, *self.common, "--out", "out"]
        argv += ["--max-steps", str(self.total), "--log-every", str(EVERY), "--ckpt-every", "0"]
        argv += [f for f in flags if f in RUNTIME]
        run = Measurement(argv, folder, self.env)
        text = "\n".join(run.lines)
        gflop = float(re.search(r"^(\S+) GFLOP per sample", text, re.M)[1])
        last = re.findall(r"(\S+) TFLOP/s(?: \| MFU (\S+)%)?", text)[-1]
        peak = float(last[0]) / (float(last[1]) / 100) if last[1] else None  # TFLOP/s
        return run.rate(self.args.device, self.skip, EVERY * self.batch), {
            "gflop_per_sample": gflop,
            "peak_tflops": peak,
        }

    def loop(self, kind: str, flags: list[str]) -> float | None:
        """Train the minimal loop or the Lightning one with ``flags``; its rate."""
        if kind == "lightning" and importlib.util.find_spec("lightning") is None:
            return None
        argv = [sys.executable, f"{kind}_loop.py", *self.common, *flags]
        argv += ["--steps", str(self.total), "--every", str(EVERY)]
        run = Measurement(argv, self.folder / "loops", self.env)
        return run.rate(self.args.device, self.skip, EVERY * self.batch)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, warmup=60)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each configuration")
    parser.add_argument("--quick", action="store_true", help="1 run of 100 steps each")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.steps = 1, 100
    default = ROOT / "benchmarks" / "results" / f"compose-{args.device}.json"
    output = settle_run_arguments(parser, args, default)
    import torch  # after the argument checks: --help stays fast

    ladder = rungs(args.device)
    full = ladder[-1]
    comparisons = [[], full]
    rates: dict[tuple[str, str], list[float]] = {}
    info: dict[str, dict[str, float | None]] = {}
    folder = Path(tempfile.mkdtemp(prefix="compose-compare-"))
    try:
        bench = Bench(args, folder)
        for repeat in range(args.repeats):
            jobs = [("generated", flags) for flags in ladder]
            jobs += [(kind, flags) for flags in comparisons for kind in ("minimal", "lightning")]
            for kind, flags in jobs if repeat % 2 == 0 else jobs[::-1]:
                key = (kind, " ".join(flags))
                if kind == "generated":
                    rate, info[key[1]] = bench.generated(flags)
                else:
                    rate = bench.loop(kind, flags)
                if rate is not None:
                    rates.setdefault(key, []).append(rate)
                    shown = f"{rate:,.0f} samples/s"
                else:
                    shown = "skipped (lightning is not installed)"
                print(
                    f"run {repeat + 1}/{args.repeats} {kind:9s} {key[1] or 'plain'}: {shown}",
                    flush=True,
                )
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    def median(kind: str, flags: list[str]) -> float | None:
        values = rates.get((kind, " ".join(flags)))
        return statistics.median(values) if values else None

    gflop = info[""]["gflop_per_sample"]
    plain = median("generated", [])
    rows = []
    for i, flags in enumerate(ladder):
        rate = median("generated", flags)
        peak = info[" ".join(flags)]["peak_tflops"]
        tflops = rate * gflop / 1e3
        rows.append(
            {
                "added": flags[-1:] if i else [],
                "flags": flags,
                "samples_per_s": round(rate, 1),
                "speedup": round(rate / plain, 3),
                "tflops": round(tflops, 3 if tflops >= 1 else 6),
                "mfu": round(tflops / peak, 4) if peak else None,
                "runs": [round(v, 1) for v in rates[("generated", " ".join(flags))]],
            }
        )
    comparison = []
    for flags in comparisons:
        generated, minimal, lightning = (
            median(k, flags) for k in ("generated", "minimal", "lightning")
        )
        comparison.append(
            {
                "flags": flags,
                "generated": round(generated, 1),
                "minimal": round(minimal, 1) if minimal else None,
                "lightning": round(lightning, 1) if lightning else None,
                "vs_minimal": round(generated / minimal, 4) if minimal else None,
                "vs_lightning": round(generated / lightning, 4) if lightning else None,
                "runs": {
                    k: [round(v, 1) for v in rates.get((k, " ".join(flags)), [])]
                    for k in ("generated", "minimal", "lightning")
                },
            }
        )
    try:
        from importlib.metadata import version

        lightning_version = version("lightning")
    except Exception:  # not installed
        lightning_version = None
    workload = {"preset": args.preset, **bench.sizes, "lr": args.lr, "gflop_per_sample": gflop}
    result = {
        "date": datetime.date.today().isoformat(),
        "device": args.device,
        "device_name": torch.cuda.get_device_name() if args.device == "cuda" else cpu_model(),
        "capability": ".".join(map(str, torch.cuda.get_device_capability()))
        if args.device == "cuda"
        else None,
        "cores": os.cpu_count(),
        "threads": args.threads,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "lightning": lightning_version,
        "python": platform.python_version(),
        "workload": workload,
        "measure": MEASURES[args.device],
        "steps": args.steps,
        "warmup": args.warmup,
        "repeats": args.repeats,
        "ladder": rows,
        "comparison": comparison,
        "targets": TARGETS if args.device == "cuda" else {"vs_minimal": 0.98},
        "command": " ".join(["python benchmarks/compose_compare.py", *sys.argv[1:]]),
    }
    output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for row in rows:
        print(
            f"{' '.join(row['added']) or 'plain':22s} {row['samples_per_s']:>12,.0f} samples/s  x{row['speedup']:.2f}  MFU {row['mfu']}"
        )
    for c in comparison:
        print(
            f"{' '.join(c['flags']) or 'plain'}: generated/minimal {c['vs_minimal']}, generated/Lightning {c['vs_lightning']}"
        )
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
