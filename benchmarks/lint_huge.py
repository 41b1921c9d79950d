"""How `python -m generator lint` copes with huge files: lines per second on the shapes of the
reliability review (2026-11-28, Target 1), each linted by a real subprocess on one core.

Shapes (about 50,000 lines each at ``--scale 1``):

* ``funcs``: 5,000 small training functions (PTT049 walked every call for every function);
* ``concat``: the tips' snippets (``snippets/*/*.py``) pasted end to end;
* ``loop``: one training loop of 50,000 statements;
* ``fixable``: 50,000 lines ``x = torch.zeros(3).cuda()`` (each one a fix);
* ``dict``: one dict literal with 50,000 fixable values;
* ``list_1mb``: one line holding a 1 MB list literal.

Each shape is timed with plain ``lint``; ``fixable`` and ``dict`` also with ``--diff`` (every
fix computed, checked and shown: the review's quadratic path). The target of issue 11 is
10,000 lines in under 2 s on one core, so 50,000 lines in under 10 s. A run longer than
``--timeout`` is killed and shown as such. This is a benchmark, not a test: run it by hand.

    python benchmarks/lint_huge.py                   # every shape, 50k lines
    python benchmarks/lint_huge.py --scale 0.2 --only funcs fixable
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FUNC = """\
def train_{i}(model, loader, optimizer):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(loss.item())
    return model
"""


def funcs(n: int) -> str:
    return "import torch\n" + "\n".join(FUNC.format(i=i) for i in range(n // 9))


def concat(n: int) -> str:
    parts = [p.read_text("utf-8") for p in sorted((ROOT / "snippets").glob("*/*.py"))]
    out: list[str] = []
    lines = 0
    while lines < n and parts:
        for text in parts:
            out.append(text if text.endswith("\n") else text + "\n")
            lines += text.count("\n") + 1
            if lines >= n:
                break
    return "".join(out)


def loop(n: int) -> str:
    body = [
        "    x = x.to(device)",
        "    loss = model(x).sum()",
        "    total += loss.item()",
        "    loss.backward()",
        "    optimizer.step()",
    ]
    lines = ["import torch", "for x in loader:"]
    lines += [body[i % len(body)] for i in range(n)]
    return "\n".join(lines) + "\n"


def fixable(n: int) -> str:
    return "import torch\n" + "x = torch.zeros(3).cuda()\n" * n


def dict_(n: int) -> str:
    values = "".join(f'    "k{i}": torch.zeros(3).cuda(),\n' for i in range(n))
    return "import torch\nd = {\n" + values + "}\n"


def list_1mb(n: int) -> str:
    del n
    items = ", ".join(str(i % 1000) for i in range(260_000))
    return f"import torch\nx = torch.tensor([{items}])\n"


SHAPES: dict[str, tuple[Callable[[int], str], tuple[str, ...]]] = {
    "funcs": (funcs, ("",)),
    "concat": (concat, ("",)),
    "loop": (loop, ("",)),
    "fixable": (fixable, ("", "--diff")),
    "dict": (dict_, ("", "--diff")),
    "list_1mb": (list_1mb, ("",)),
}


def pin() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def timed(args: list[str], timeout: float) -> tuple[float, float, int | None]:
    """Wall and CPU seconds of one subprocess, and its exit status (None when killed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, preexec_fn=pin
    )
    try:
        code: int | None = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = None
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0: about 50,000 lines")
    parser.add_argument("--only", nargs="*", choices=sorted(SHAPES), help="these shapes only")
    parser.add_argument("--timeout", type=float, default=150.0, help="seconds per run")
    args = parser.parse_args()
    n = int(50_000 * args.scale)
    print(f"{'shape':<10} {'mode':<7} {'lines':>7} {'wall s':>8} {'CPU s':>8} {'lines/s CPU':>12}")
    with tempfile.TemporaryDirectory(prefix="lint-huge-") as tmp:
        for name, (make, modes) in SHAPES.items():
            if args.only and name not in args.only:
                continue
            path = Path(tmp, f"huge_{name}.py")
            text = make(n)
            path.write_text(text, "utf-8")
            lines = text.count("\n")
            for mode in modes:
                cmd = [sys.executable, "-m", "generator", "lint", str(path)]
                cmd += [mode] if mode else []
                wall, cpu, code = timed(cmd, args.timeout)
                rate = f"{lines / cpu:,.0f}" if code is not None and cpu else "killed"
                print(
                    f"{name:<10} {mode or 'lint':<7} {lines:>7} {wall:>8.1f} {cpu:>8.1f} {rate:>12}",
                    flush=True,
                )
    print("(one core; on a shared machine CPU time is the one-core cost)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
