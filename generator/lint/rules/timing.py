"""Profiling and timing: what the profiler records, and what a host clock measures."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule
from generator.lint.rules.steps import with_calls, wraps_training
from generator.lint.rules.tensors import device_of
from generator.lint.syntax import iter_region, kwarg, method_name

_PROFILE = {
    "torch.profiler.profile",
    "torch.profiler.profiler.profile",
    "torch.autograd.profiler.profile",
}
_CLOCKS = {"time.time", "time.perf_counter", "time.monotonic"}
#: Methods and calls that wait for the GPU by themselves: a timing around them is right.
_WAITS = {"item", "cpu", "tolist", "numpy", "synchronize"}
_WAITING_CALLS = {
    "torch.save",
    "torch.load",
    "torch.distributed.barrier",
    "torch.distributed.init_process_group",
}
#: Names of functions that run a whole phase of training (an epoch, an evaluation).
_PHASE = re.compile(r"train|epoch|evaluat|validat|^fit$|^test$", re.I)


def _builds(ctx: Context, call: ast.Call) -> bool:
    """A module's constructor: ``nn.Linear(...)``, a class of this file, a capitalised name
    the file never assigns (``Net(depth=50)``)."""
    q = ctx.qualname(call.func) or ""
    if q.startswith("torch.nn.") and q.rsplit(".", 1)[1][:1].isupper():
        return True
    name = call.func.id if isinstance(call.func, ast.Name) else None
    return name is not None and (
        name in ctx.module_classes or (name[:1].isupper() and name not in ctx.assignments)
    )


class ProfileWithoutSchedule(Rule):
    """A `torch.profiler.profile()` without a `schedule` records every step, the first
    (warm-up) ones included, and the averages then mix one-off costs with steady-state
    work. Pass `schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)` and call
    `prof.step()` once per step."""

    code = "PTT050"
    name = "profile-without-schedule"
    severity = "info"
    message = "profiler around a training loop without a `schedule`: warm-up steps are mixed into the results"
    message_zh = "profiler 包着训练循环却没有 `schedule`：预热步骤会混进结果"
    why_zh = (
        "没有 `schedule` 的 `torch.profiler.profile()` 会记录每一步，包括最初的预热步骤，得到的平均值把"
        "一次性开销和稳定状态下的工作混在了一起。请传 `schedule=torch.profiler.schedule(wait=1, warmup=1,"
        " active=3)`，并在每一步调用一次 `prof.step()`。"
    )
    tip = "profile-with-torch-profiler"
    VALID = (
        "from torch.profiler import profile, schedule\n"
        "with profile(schedule=schedule(wait=1, warmup=1, active=2)) as prof:\n"
        "    for x in data:\n        f(x).backward()\n        optimizer.step()\n        prof.step()\n",
    )
    INVALID = (
        "from torch.profiler import profile\nwith profile() as prof:\n    for x in data:\n"
        "        f(x).backward()\n        optimizer.step()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for with_, call in with_calls(ctx, _PROFILE):
            if kwarg(call, "schedule") is None and wraps_training(ctx, with_.body):
                yield Report(call)


class TimingWithoutSync(Rule):
    """CUDA kernels run asynchronously: a host clock read right after launching GPU work
    measures the launch, not the work. Synchronise (`torch.cuda.synchronize()`) before
    reading the clock at both ends, warm up first, or use `torch.utils.benchmark` or CUDA
    events. Reported only in files that use CUDA and never synchronise; timing a loop that
    runs whole epochs or evaluations (the wall time of a run) is not reported, nor is timing
    set-up or checkpoint code that waits for the GPU by itself (`torch.save`, `torch.load`, a
    copy to or from the device, a barrier) or only builds objects on the host (`Net()`,
    `nn.Linear(...)`)."""

    code = "PTT051"
    name = "timing-without-sync"
    severity = "info"
    message = "host clock around CUDA work without `torch.cuda.synchronize()`: this times the launch, not the work"
    message_zh = "在 CUDA 工作前后读取主机时钟却没有 `torch.cuda.synchronize()`：测到的是 kernel 启动，而不是计算本身"
    why_zh = (
        "CUDA kernel 是异步执行的：刚发射完 GPU 工作就读取主机时钟，测到的只是启动，而不是工作本身。请在"
        "两端读取时钟之前都同步（`torch.cuda.synchronize()`），先做预热，或者改用 `torch.utils.benchmark`"
        " 或 CUDA 事件。只在用到 CUDA 且从不同步的文件中报告；给整个训练过程计时（区间里调用了训练或评估"
        "函数）不会报告；给本身就会等待 GPU 的准备或检查点代码（`torch.save`、`torch.load`、与设备之间的拷贝、"
        "barrier）计时，或者给只在主机上构建对象的代码（`Net()`、`nn.Linear(...)`）计时，也不会报告。"
    )
    tip = "time-gpu-code-correctly"
    VALID = (
        "import time\nimport torch\nx = torch.randn(8, device='cuda')\ntorch.cuda.synchronize()\n"
        "start = time.perf_counter()\ny = x @ x\ntorch.cuda.synchronize()\nms = time.perf_counter() - start\n",
        "import time\nstart = time.time()\nrows = load()\nelapsed = time.time() - start\n",
        "import time\nimport torch\nparser.add_argument('--device', choices=['cpu', 'cuda'])\n"
        "start = time.perf_counter()\nbuild_site()\nprint(time.perf_counter() - start)\n",
        # the wall time of a whole multi-epoch run, as MAE and DETR print it
        "import time\nimport torch\nmodel = model.to('cuda')\nstart_time = time.time()\n"
        "for epoch in range(args.epochs):\n    train_stats = train_one_epoch(model, loader, optimizer)\n"
        "    out = model(x)\ntotal_time = time.time() - start_time\n",
        # set-up that waits for the GPU by itself: building the model, copying it, loading weights
        "import time\nimport torch\nt0 = time.time()\nmodel = Net(depth=50)\n"
        "state = torch.load(path, map_location='cpu', weights_only=True)\n"
        "model.load_state_dict(state['model'])\nmodel = model.cuda()\n"
        "print(f'model ready in {time.time() - t0:.1f}s')\n",
        # a checkpoint write: torch.save copies every tensor to the host first
        "import time\nimport torch\nmodel = model.cuda()\nstart = time.perf_counter()\n"
        "torch.save({'model': model.state_dict(), 'step': step}, path)\n"
        "log(f'checkpoint written in {time.perf_counter() - start:.2f}s')\n",
    )
    INVALID = (
        Invalid(
            "import time\nimport torch\na = torch.randn(256, 256, device='cuda')\n"
            "start = time.time()\nc = a @ a\nelapsed = time.time() - start\n",
            instead="import time\nimport torch\na = torch.randn(256, 256, device='cuda')\n"
            "torch.cuda.synchronize()\nstart = time.time()\nc = a @ a\ntorch.cuda.synchronize()\n"
            "elapsed = time.time() - start\n",
        ),
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        clocks = ctx.calls(*_CLOCKS)
        if (
            not clocks
            or not self._uses_cuda(ctx)
            or ctx.methods("synchronize")
            or ctx.calls("torch.cuda.synchronize")
        ):
            return
        stops = [
            (parent, parent.right.id)
            for c in clocks
            if isinstance(parent := ctx.parent(c), ast.BinOp)
            and isinstance(parent.op, ast.Sub)
            and parent.left is c
            and isinstance(parent.right, ast.Name)
        ]
        for start in clocks:
            assign = ctx.parent(start)
            if not (
                isinstance(assign, ast.Assign)
                and len(assign.targets) == 1
                and isinstance(assign.targets[0], ast.Name)
            ):
                continue
            name = assign.targets[0].id
            block = next((b for b in ctx.blocks if assign in b), None)
            if block is None:
                continue
            i = block.index(assign)
            later = {id(stmt): j for j, stmt in enumerate(block) if j > i}
            for stop, stopped in stops:
                if stopped != name:
                    continue
                j = next((later[id(a)] for a in ctx.ancestors(stop) if id(a) in later), None)
                if j is not None and self._timed_gpu_work(ctx, block[i + 1 : j + 1]):
                    yield Report(stop)

    @staticmethod
    def _uses_cuda(ctx: Context) -> bool:
        """Whether the file imports torch and puts tensors on a CUDA device (a ``"cuda"``
        device string, ``torch.device("cuda")`` or ``.cuda()``), if only when one exists."""
        if not any(q.split(".")[0] == "torch" for q in ctx.imports.values()):
            return False
        if ctx.methods("cuda"):
            return True
        for const in ctx.by_type[ast.Constant]:
            if (
                isinstance(const, ast.Constant)
                and isinstance(const.value, str)
                and (const.value == "cuda" or const.value.startswith("cuda:"))
            ):
                parent = ctx.parent(const)
                if isinstance(parent, ast.IfExp | ast.Assign | ast.keyword) or (
                    isinstance(parent, ast.Call)
                    and (method_name(parent) == "to" or ctx.qualname(parent.func) == "torch.device")
                ):
                    return True
        return False

    @staticmethod
    def _runs_phases(loop: ast.AST) -> bool:
        """Whether a loop calls whole phases of a run (``train_one_epoch``, ``evaluate``), as
        the epoch loop of a script does: timing it measures the run, not a kernel."""
        return any(
            isinstance(n, ast.Call)
            and (
                name := (n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", ""))
            )
            and _PHASE.search(name)
            for n in ast.walk(loop)
        )

    @staticmethod
    def _timed_gpu_work(ctx: Context, stmts: list[ast.stmt]) -> bool:
        """Whether ``stmts`` launch tensor work (a matmul, a ``torch`` function, a model
        call) and contain nothing that waits for the GPU by itself."""
        if len(stmts) < 2:
            return False
        work = False
        for node in iter_region(stmts, conditional=True):
            if isinstance(node, ast.For | ast.While) and (
                ctx.loops.trains(node) or TimingWithoutSync._runs_phases(node)
            ):
                return False  # a training loop's own pace, or the wall time of the whole run
            if isinstance(node, ast.Call) and (
                method_name(node) in _WAITS
                or ctx.qualname(node.func) in _WAITING_CALLS
                or (
                    method_name(node) in {"cuda", "to"}
                    and device_of(ctx, node)[0]
                    and kwarg(node, "non_blocking") is None
                )
            ):
                return False  # these wait for the GPU themselves
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                work = True
            elif isinstance(node, ast.Call):
                q = ctx.qualname(node.func) or ""
                if _builds(ctx, node):
                    continue  # building a module on the host launches no GPU work
                if (
                    q.startswith("torch.") and not q.startswith("torch.cuda.")
                ) or ctx.name_is_module(node.func):
                    work = True
        return work
