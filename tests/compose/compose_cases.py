"""Cases and helpers for tests/compose/test_compose.py.

The combinations follow cookiecutter-django: SUPPORTED lists what must compose, pass ruff and
train; UNSUPPORTED what must fail cleanly. Training runs go through :class:`ScriptRunner`,
which starts each run as a fresh process forked from one that has already imported torch:
importing torch, and torch._dynamo that torch.optim pulls in, costs about 3 s of CPU a
process, far more than the few steps each run trains. DDP runs start a real
`torchrun --standalone` the same way; the workers it launches are thin launchers that have
the same server fork each worker process with torchrun's arguments and environment.
Every run has DeprecationWarning and FutureWarning as errors and CUDA hidden.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import pytest

from generator import cli
from generator.compose.options import OPTIONS
from generator.compose.script import (
    CORE_FEATURES,
    ComposeOptions,
    cited_tips,
    compose,
    read_tips_by_feature,
)
from generator.records.process import WARNING_FLAGS

#: The conv net's feature flags (without --amp-dtype, a choice of --amp), as ``--`` names.
FEATURES = [
    o.flag[2:]
    for o in OPTIONS
    if o.group == "features" and "convnet" in o.models and o.name != "amp_dtype"
]
#: Small values for the features that take one.
VALUES = {"accum": "2", "clip-grad-norm": "1.0", "seed": "0", "workers": "1", "eval-every": "4"}
#: Every feature at once, less --cudnn-benchmark, which contradicts --deterministic.
FULL = tuple(f for f in FEATURES if f != "cudnn-benchmark")


def flags(features: tuple[str, ...]) -> list[str]:
    """Composer flags for ``features``, with the test-sized values."""
    out: list[str] = []
    for feature in features:
        out.append(f"--{feature}")
        if feature in VALUES:
            out.append(VALUES[feature])
    return out


def case_id(features: tuple[str, ...]) -> str:
    if features == FULL:
        return "full"
    return "+".join(features) or "plain"


SUPPORTED: list[tuple[str, ...]] = [
    (),
    *[(f,) for f in FEATURES],
    *combinations(CORE_FEATURES["convnet"], 2),
    FULL,
]

#: Contradictory or out-of-range choices: the flags and a part of the one-line message.
UNSUPPORTED: list[tuple[str, list[str], str]] = [
    ("deterministic+cudnn-benchmark", ["--deterministic", "--cudnn-benchmark"], "contradict"),
    ("accum-0", ["--accum", "0"], "--accum must be in [1, 1024], got 0"),
    ("fp16-on-cpu", ["--amp", "--amp-dtype", "fp16", "--device", "cpu"], "needs a CUDA"),
    ("amp-dtype-without-amp", ["--amp-dtype", "bf16"], "--amp-dtype needs --amp"),
    ("tf32-on-cpu", ["--tf32", "--device", "cpu"], "only affects CUDA"),
    ("cudnn-benchmark-on-cpu", ["--cudnn-benchmark", "--device", "cpu"], "only affects CUDA"),
    ("clip-0", ["--clip-grad-norm", "0"], "must be a positive number"),
    ("workers-negative", ["--workers", "-1"], "--workers must be in [0, 256], got -1"),
    ("eval-every-0", ["--eval-every", "0"], "--eval-every must be in [1, 1000000000]"),
    ("seed-negative", ["--seed", "-1"], "--seed must be in"),
]

#: Script options that make the default workload tiny: a 32-sample global batch of 8x8 images.
WORKLOAD = ["--width", "8", "--image-size", "8", "--lr", "0.01"]
GLOBAL_BATCH = 32

#: Warnings as errors, exactly as for the snippets (see generator.records.process.WARNING_FLAGS for the
#: one exception: torch's own use of torch.jit.script_method inside torch.compile's imports).
PYTHONWARNINGS = ",".join(WARNING_FLAGS[1::2])
ENV = {
    "CUDA_VISIBLE_DEVICES": "",
    "OMP_NUM_THREADS": "1",
    "PYTHONWARNINGS": PYTHONWARNINGS,
    "TORCHINDUCTOR_COMPILE_THREADS": "1",  # no pool of compile workers, each importing torch
    "PYTHONUNBUFFERED": "1",
}


def assert_refused_before_writing(
    composer_flags: list[str], message: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``compose`` with ``composer_flags`` exits 2 with one ``error:`` line holding
    ``message``, and writes nothing into ``folder``."""
    out = folder / "train.py"
    assert cli.main(["compose", *composer_flags, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert list(folder.iterdir()) == []


def options(composer_flags: list[str]) -> ComposeOptions:
    """Parse composer flags the way the CLI does."""
    import argparse

    from generator.compose.script import add_arguments, options_from_args

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return options_from_args(parser.parse_args(composer_flags))


def write_script(folder: Path, composer_flags: list[str], name: str = "train.py") -> Path:
    """Compose a script into ``folder`` and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(compose(options(composer_flags), read_tips_by_feature()), encoding="utf-8")
    return path


# --- running -------------------------------------------------------------------------------

_SERVER = r"""
import atexit, json, os, runpy, select, signal, socket, sys, time, traceback

# What the scripts import, and what torch.optim and torch.compile import on first use.
import torch, torch.distributed, torch.distributed.run, torch.nn.parallel, torch.profiler
import torch.utils.checkpoint, torch.utils.data
import torch._dynamo, torch._inductor.compile_fx


def run(argv, module, cwd):
    # Run a script or module as __main__ in this forked process; return its exit status.
    code = 1
    sys.stdout.reconfigure(line_buffering=True)
    os.chdir(cwd)
    sys.argv = list(argv)
    try:
        if module:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
            runpy.run_path(sys.argv[0], run_name="__main__")
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def start(req):
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.setpgid(0, 0)  # its own process group, for a timeout to kill it with its children
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        code = run(req["argv"], req["module"], req["cwd"])
    finally:
        os._exit(code)


def worker(conn):
    # A torchrun worker, asked for by the launcher torchrun started: it runs with the
    # launcher's stdio, environment, folder and arguments, and sends back its status.
    pid = os.fork()
    if pid:
        conn.close()
        return pid
    code = 1
    try:
        data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        while not data.endswith(b"\n"):
            data += conn.recv(1 << 20)
        req = json.loads(data)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.environ.clear()
        os.environ.update(req["env"])
        conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        code = run(req["argv"], None, req["cwd"])
        conn.sendall(json.dumps({"rc": code}).encode() + b"\n")
    finally:
        os._exit(code)


def reply(obj):
    os.write(1, (json.dumps(obj) + "\n").encode())


listener = socket.socket(socket.AF_UNIX)
listener.bind(sys.argv[1])
listener.listen(16)
waiting = {}  # pid -> deadline, for the runs the client waits for
workers = set()
buffer = b""
reply({"ready": True})
while True:
    ready, _, _ = select.select([0, listener], [], [], 0.02)
    if listener in ready:
        workers.add(worker(listener.accept()[0]))
    if 0 in ready:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            req = json.loads(line)
            if req["op"] == "start":
                reply({"pid": start(req)})
            else:
                waiting[req["pid"]] = time.monotonic() + req["timeout"]
    for pid in list(workers):
        if os.waitpid(pid, os.WNOHANG)[0]:
            workers.discard(pid)
    for pid, deadline in list(waiting.items()):
        done, status = os.waitpid(pid, os.WNOHANG)
        timed_out = not done and time.monotonic() > deadline
        if timed_out:
            os.killpg(pid, signal.SIGKILL)
            for worker_pid in workers:  # torchrun's workers are not in its group
                os.kill(worker_pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        if done or timed_out:
            del waiting[pid]
            reply({"rc": os.waitstatus_to_exitcode(status), "timed_out": timed_out})
for pid in workers:
    os.kill(pid, signal.SIGKILL)
"""

#: What `torchrun --no-python` starts as each worker: it has the server fork the worker,
#: with this process's arguments, environment and stdio, forwards SIGTERM and SIGINT to it
#: and exits with its status.
_LAUNCHER = r"""#!{python} -S
import json, os, signal, socket, sys

sock = socket.socket(socket.AF_UNIX)
sock.connect({socket!r})
request = {{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}}
socket.send_fds(sock, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
answers = sock.makefile("rb")
pid = json.loads(answers.readline())["pid"]
for signum in (signal.SIGTERM, signal.SIGINT):
    signal.signal(signum, lambda signum, frame: os.kill(pid, signum))
line = answers.readline()
sys.exit(json.loads(line)["rc"] if line else 1)
"""


@dataclass
class Run:
    """A finished run: its exit status, its output (stdout and stderr), what it logged."""

    rc: int
    output: str
    timed_out: bool = False
    losses: list[float] = field(default_factory=list)
    accuracies: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        steps = re.findall(r"^step +\d+ \| loss (\S+)", self.output, re.M)
        evals = re.findall(r"^eval +\d+ \|.*accuracy (\S+)%", self.output, re.M)
        self.losses = [float(v) for v in steps]
        self.accuracies = [float(v) / 100 for v in evals]


class ScriptRunner:
    """Runs scripts in fresh processes forked from a server that has imported torch.

    DDP runs start a real `torchrun --standalone`, whose workers are launchers that have
    the same server fork the worker processes (see _LAUNCHER).
    """

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="compose-runner-"))
        self.socket = self.folder / "server.sock"
        self.launcher = self.folder / "launch-worker"
        self.launcher.write_text(_LAUNCHER.format(python=sys.executable, socket=str(self.socket)))
        self.launcher.chmod(0o755)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER, str(self.socket)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(os.environ, **ENV),
        )
        assert self._read() == {"ready": True}

    def _read(self) -> dict:
        assert self.proc.stdout is not None
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the script server died (exit {self.proc.wait()})")
        return json.loads(answer)

    def _ask(self, request: dict) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        self.proc.stdin.flush()
        return self._read()

    def start(self, script: Path, args: list[str], log: Path, nproc: int = 0) -> int:
        """Start ``script`` with ``args`` (under torchrun when ``nproc``); return its pid."""
        if nproc:
            argv = ["torchrun", "--standalone", f"--nproc-per-node={nproc}", "--no-python"]
            argv += [str(self.launcher), str(script), *args]
            module = "torch.distributed.run"
        else:
            argv, module = [str(script), *args], None
        request = {"op": "start", "argv": argv, "module": module, "cwd": str(script.parent)}
        return self._ask({**request, "log": str(log)})["pid"]

    def wait(self, pid: int, log: Path, timeout: float = 240) -> Run:
        """Wait for the run ``pid`` (killed after ``timeout`` s) and collect its output."""
        answer = self._ask({"op": "wait", "pid": pid, "timeout": timeout})
        return Run(answer["rc"], log.read_text(errors="replace"), answer["timed_out"])

    def run(self, script: Path, args: list[str], nproc: int = 0, timeout: float = 240) -> Run:
        """Run ``script`` to completion."""
        log = script.parent / f"run-{time.monotonic_ns()}.log"
        return self.wait(self.start(script, args, log, nproc), log, timeout)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        shutil.rmtree(self.folder, ignore_errors=True)


def ruff(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ruff with its defaults (--isolated: no project configuration applies)."""
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--isolated"],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


#: The rules a composed script passes, on top of ruff's defaults.
RUFF_RULES = "W,I,B,UP"


def check_composed_source(
    script: Path, composer_flags: list[str], uncited: frozenset[str] = frozenset()
) -> str:
    """No template leftovers, every tip of every chosen feature cited (less ``uncited``),
    lines of at most 88 characters, ruff clean and formatted; the script's text."""
    text = script.read_text(encoding="utf-8")
    for leftover in ("{{", "{%", "{#"):
        assert leftover not in text, f"template leftover {leftover!r}"
    cites = read_tips_by_feature()
    chosen = options(composer_flags).features()
    expected = {t for f in chosen for t in cites.get(f, [])} - uncited
    assert set(cited_tips(text)) == expected
    for number, line in enumerate(text.splitlines(), 1):
        if "# tip: " not in line and "python -m generator compose" not in line:
            assert len(line) <= 88, f"line {number} is {len(line)} characters long"
    lint = ruff("check", "--extend-select", RUFF_RULES, script.name, cwd=script.parent)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = ruff("format", "--check", "--diff", script.name, cwd=script.parent)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    return text


# --- the script's helpers, called from a driver that imports the composed train.py ----------

#: Imports a composed train.py from its folder and prints, as JSON, what its helpers
#: return: the FLOP count of a tiny model (and whether counting left any trace), the GPU
#: peak lookup, the log's speed text, the data loader's reads and the workload presets.
HELPERS_DRIVER = r"""
import json
import sys

import torch
from torch import nn
from torch.utils.data import BatchSampler, Dataset, TensorDataset

import train

out = {}
width, size, batch = 8, 8, 4
data = train.build_dataset("train", 16, size)
torch.manual_seed(0)
model = train.build_model(width)
weights = {k: v.clone() for k, v in model.state_dict().items()}
rng = torch.get_rng_state()
out["flops"] = train.count_flops(model, data, batch, torch.device("cpu"))
out["no_trace"] = (
    all(p.grad is None for p in model.parameters())
    and torch.equal(rng, torch.get_rng_state())
    and all(torch.equal(weights[k], v) for k, v in model.state_dict().items())
)
# A model whose forward draws random numbers and updates buffers.
bn = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Dropout(0.5), nn.Flatten(),
                   nn.LazyLinear(10))
bn(torch.zeros(2, 3, size, size))  # materialise the lazy layer
before = {k: v.clone() for k, v in bn.state_dict().items()}
rng = torch.get_rng_state()
train.count_flops(bn, data, batch, torch.device("cpu"))
out["bn_no_trace"] = torch.equal(rng, torch.get_rng_state()) and all(
    torch.equal(before[k], v) for k, v in bn.state_dict().items()
)

names = sys.argv[1:]
out["peaks"] = {
    name: [train.peak_tflops(name, p) for p in ("bf16", "tf32", "fp32")] for name in names
}
out["cpu_peak"] = train.peak_tflops("a CPU", "bf16")
out["speed_known"] = train.speed(4.5e14, 1.0, 1e15)
out["speed_unknown"] = train.speed(4.5e14, 1.0, None)


class Counting(TensorDataset):
    calls = 0

    def __getitem__(self, index):
        Counting.calls += 1
        return super().__getitem__(index)


class PerSample(Dataset):
    calls = 0

    def __init__(self, base):
        self.base = base

    def __len__(self):
        return len(self.base)

    def __getitem__(self, index):
        PerSample.calls += 1
        return self.base[index]


x, y = torch.randn(64, 3, 2, 2), torch.arange(64)
batched = list(train.batch_loader(Counting(x, y), BatchSampler(range(64), 16, False)))
per_sample = list(train.batch_loader(PerSample(TensorDataset(x, y)), BatchSampler(range(64), 16, False)))
out["reads"] = [Counting.calls, PerSample.calls, len(batched)]
out["same_batches"] = all(
    torch.equal(a, b) for (xa, ya), (xb, yb) in zip(batched, per_sample) for a, b in ((xa, xb), (ya, yb))
)

presets = {}
for argv in (["--device", "cuda"], ["--device", "cpu"], ["--device", "cpu", "--preset", "gpu", "--width", "16"]):
    sys.argv = ["train.py", *argv]
    args = train.parse_args()
    presets[" ".join(argv)] = [args.preset, args.width, args.image_size, args.batch_size, args.samples, round(args.lr, 6)]
out["presets"] = presets
print(json.dumps(out))
"""
