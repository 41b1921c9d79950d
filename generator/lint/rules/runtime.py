"""Global switches (determinism), debugging aids and evaluation under no_grad."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.flags import FlagDefault
from generator.lint.rules.base import Invalid, Report, Rule
from generator.lint.rules.steps import with_calls, wraps_training
from generator.lint.syntax import is_const, iter_region, method_name

_DETERMINISTIC = "torch.use_deterministic_algorithms"


def _assigned(ctx: Context, qualname: str, value: bool) -> list[ast.Assign]:
    """Assignments of the literal ``value``, or of a flag whose literal default is ``value``
    (``cudnn.deterministic = args.torch_deterministic`` with ``default=True``), to
    ``qualname``."""
    return [node for node, _ in _settings(ctx, qualname, value)]


def _settings(
    ctx: Context, qualname: str, value: bool
) -> list[tuple[ast.Assign, FlagDefault | None]]:
    """(assignment, the flag's default when the value is a flag's) for each assignment of
    ``value`` to ``qualname``."""
    out: list[tuple[ast.Assign, FlagDefault | None]] = []
    for node in ctx.by_type[ast.Assign]:
        assert isinstance(node, ast.Assign)
        if not any(ctx.qualname(t) == qualname for t in node.targets):
            continue
        found = ctx.flags.literal_or_default(node.value, value)
        if found is True:
            out.append((node, None))
        elif isinstance(found, FlagDefault):
            out.append((node, found))
    return out


def _assigned_true(ctx: Context, qualname: str) -> list[ast.Assign]:
    return _assigned(ctx, qualname, True)


def _report(node: ast.AST, default: FlagDefault | None) -> Report:
    if default is None:
        return Report(node)
    return Report(node, args={"flag": default.describe()}, variant="default")


class BenchmarkWithDeterministic(Rule):
    """`cudnn.benchmark = True` times several convolution algorithms and keeps the fastest,
    which can differ from run to run, while deterministic algorithms are asked for in the
    same program. The two contradict each other: set `cudnn.benchmark = False` when you
    need reproducible results. A file that sets `cudnn.benchmark = False` somewhere (where
    it asks for determinism) is taken to have done so. A setting taken from a flag whose
    default the file states (`cudnn.benchmark = args.benchmark` with `default=True`) is
    reported with that default named."""

    code = "PTT046"
    name = "benchmark-with-deterministic"
    severity = "error"
    message = "`cudnn.benchmark = True` together with deterministic algorithms: set `cudnn.benchmark = False`"
    message_zh = "`cudnn.benchmark = True` 与确定性算法同时开启：请设置 `cudnn.benchmark = False`"
    why_zh = (
        "`cudnn.benchmark = True` 会试跑多种卷积算法并选出最快的一个，每次运行选中的可能不同，而同一个"
        "程序又要求使用确定性算法。两者互相矛盾：需要可复现的结果时，请设置 `cudnn.benchmark = False`。"
        "文件中某处（要求确定性的地方）设置了 `cudnn.benchmark = False` 的，视为已经处理。取自命令行参数、"
        "且文件写明了其默认值的设置（`cudnn.benchmark = args.benchmark`，`default=True`），报告时会注明这个默认值。"
    )
    message_args = {"flag": "--benchmark True"}
    variants = {
        "default": (
            "`cudnn.benchmark` is on with the default `{flag}`, together with deterministic algorithms: set `cudnn.benchmark = False`",
            "在默认的 `{flag}` 下 `cudnn.benchmark` 是开启的，同时又要求确定性算法：请设置 `cudnn.benchmark = False`",
        )
    }
    tip = "deterministic-algorithms"
    VALID = (
        "import torch\ntorch.use_deterministic_algorithms(True)\ntorch.backends.cudnn.benchmark = False\n",
        "import torch\ntorch.backends.cudnn.benchmark = True\n",
        # apex's ImageNet example: benchmark on, and off again when determinism is asked for
        "import torch\ntorch.backends.cudnn.benchmark = True\nif args.deterministic:\n"
        "    torch.backends.cudnn.benchmark = False\n    torch.backends.cudnn.deterministic = True\n",
    )
    INVALID = (
        "import torch\ntorch.use_deterministic_algorithms(True)\ntorch.backends.cudnn.benchmark = True\n",
        "import torch\ntorch.backends.cudnn.deterministic = True\ntorch.backends.cudnn.benchmark = True\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        benchmark = _settings(ctx, "torch.backends.cudnn.benchmark", True)
        if not benchmark or _assigned(ctx, "torch.backends.cudnn.benchmark", False):
            return  # switched off again where determinism is asked for (apex's --deterministic)
        deterministic = _assigned_true(ctx, "torch.backends.cudnn.deterministic") or any(
            c.args and not is_const(c.args[0], False) for c in ctx.calls(_DETERMINISTIC)
        )
        if deterministic:
            yield from (_report(node, default) for node, default in benchmark)


class CudnnDeterministicOnly(Rule):
    """`torch.backends.cudnn.deterministic = True` only covers cuDNN convolutions; many
    other CUDA kernels (scatter, index_add, some poolings and interpolations) stay
    nondeterministic. `torch.use_deterministic_algorithms(True)` covers every op, and
    raises on ops that have no deterministic implementation. A setting taken from a flag
    whose default the file states (`cudnn.deterministic = args.torch_deterministic` with
    `default=True`) is reported with that default named."""

    code = "PTT047"
    name = "cudnn-deterministic-only"
    severity = "info"
    message = "`cudnn.deterministic = True` covers only cuDNN: call `torch.use_deterministic_algorithms(True)`"
    message_zh = "`cudnn.deterministic = True` 只对 cuDNN 生效：请调用 `torch.use_deterministic_algorithms(True)`"
    why_zh = (
        "`torch.backends.cudnn.deterministic = True` 只覆盖 cuDNN 的卷积；许多其他 CUDA kernel（scatter、"
        "index_add、部分池化和插值）仍是非确定性的。`torch.use_deterministic_algorithms(True)` 覆盖所有"
        "算子，遇到没有确定性实现的算子会直接报错。取自命令行参数、且文件写明了其默认值的设置"
        "（`cudnn.deterministic = args.torch_deterministic`，`default=True`），报告时会注明这个默认值。"
    )
    message_args = {"flag": "--torch-deterministic True"}
    variants = {
        "default": (
            "`cudnn.deterministic` is on with the default `{flag}`, which covers only cuDNN: call `torch.use_deterministic_algorithms(True)`",
            "在默认的 `{flag}` 下 `cudnn.deterministic` 是开启的，但它只对 cuDNN 生效：请调用 `torch.use_deterministic_algorithms(True)`",
        )
    }
    tip = "deterministic-algorithms"
    VALID = (
        "import torch\ntorch.use_deterministic_algorithms(True)\ntorch.backends.cudnn.deterministic = True\n",
        # off by default: the flag's default (store_true) is False
        "import argparse\nimport torch\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--deterministic', action='store_true')\nargs = parser.parse_args()\n"
        "torch.backends.cudnn.deterministic = args.deterministic\n",
    )
    INVALID = (
        "import torch\ntorch.backends.cudnn.deterministic = True\n",
        # on by default: reported with the default named
        "import argparse\nimport torch\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--torch-deterministic', type=lambda x: x.lower() == 'true', default=True)\n"
        "args = parser.parse_args()\ntorch.backends.cudnn.deterministic = args.torch_deterministic\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        if ctx.calls(_DETERMINISTIC):
            return
        for node, default in _settings(ctx, "torch.backends.cudnn.deterministic", True):
            yield _report(node, default)


class DetectAnomalyOn(Rule):
    """Anomaly detection records a traceback for every op of the forward pass and checks
    every backward result for NaN: a large slowdown. Use it around one suspicious step
    (`with torch.autograd.detect_anomaly():`) while debugging, never for a whole run."""

    code = "PTT048"
    name = "detect-anomaly-on"
    severity = "warning"
    message = (
        "autograd anomaly detection is on for the whole training run: use it only to debug one step"
    )
    message_zh = "整个训练过程都开着自动求导的异常检测：只在调试某一步时使用它"
    why_zh = (
        "异常检测会为前向传播的每个算子记录调用栈，并检查每个反向结果是否为 NaN：速度会大幅下降。只在调试"
        "时把它包在一个可疑的步骤外面（`with torch.autograd.detect_anomaly():`），不要在整个训练过程中开启。"
    )
    tip = "disable-debug-apis"
    VALID = (
        "import torch\nwith torch.autograd.detect_anomaly():\n    train_step(bad_batch)\n",
        "import torch\ntorch.autograd.set_detect_anomaly(args.debug)\n",
    )
    INVALID = (
        "import torch\ntorch.autograd.set_detect_anomaly(True)\n",
        "import torch\nwith torch.autograd.detect_anomaly():\n    for x in data:\n"
        "        f(x).backward()\n        optimizer.step()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        names = (
            "torch.autograd.set_detect_anomaly",
            "torch.autograd.anomaly_mode.set_detect_anomaly",
        )
        for call in ctx.calls(*names):
            if call.args and is_const(call.args[0], True):
                yield Report(call)
        anomaly = {"torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly"}
        for with_, call in with_calls(ctx, anomaly):
            if wraps_training(ctx, with_.body):
                yield Report(call)


class NoGradEvalLoop(Rule):
    """`torch.inference_mode()` does everything `no_grad()` does and also skips version
    counters and view tracking, so evaluation loops run a little faster. Its outputs can
    never enter autograd later (an error if they do), so it fits code that only
    evaluates; keep `no_grad()` where results are reused in training. Not reported in files
    that use FSDP or DeepSpeed, nor for an evaluation function called from inside a training
    loop: tensors created in inference mode (an FSDP model's unsharded parameters, a cache a
    module builds on first use) then break the training steps that follow."""

    code = "PTT049"
    name = "no-grad-eval-loop"
    severity = "info"
    message = "evaluation loop under `torch.no_grad()`: `torch.inference_mode()` is faster where outputs stay out of autograd"
    message_zh = "评估循环使用 `torch.no_grad()`：在输出不会再进入自动求导的地方，`torch.inference_mode()` 更快"
    why_zh = (
        "`torch.inference_mode()` 做了 `no_grad()` 所做的一切，还省去了版本计数器和视图追踪，所以评估循环"
        "会快一点。它的输出以后不能再进入自动求导（否则报错），因此适合只做评估的代码；结果还要用于训练的"
        "地方请保留 `no_grad()`。文件使用 FSDP 或 DeepSpeed 时，以及评估函数在训练循环内部被调用时（推理"
        "模式下创建的张量会破坏之后的训练），不会报告。"
    )
    tip = "inference-mode-for-eval"
    VALID = (
        "import torch\n\n@torch.inference_mode()\ndef evaluate(model, loader):\n    model.eval()\n"
        "    return [model(x) for x in loader]\n",
        "import torch\nmodel.eval()\nwith torch.no_grad():\n    for x in batches:\n        out = model(x)\n",
        "import torch\nwith torch.no_grad():\n    for p, ema_p in zip(model.parameters(), ema.parameters()):\n"
        "        ema_p.mul_(0.99).add_(p, alpha=0.01)\n",
        # evaluation inside the training loop of an FSDP model, as litgpt's validate()
        "import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\n"
        "@torch.no_grad()\ndef validate(model, val_loader):\n    model.eval()\n"
        "    losses = [model(x).loss for x in val_loader]\n    model.train()\n"
        "    return torch.stack(losses).mean()\n",
        "import torch\n\n@torch.no_grad()\ndef validate(model, loader):\n    model.eval()\n"
        "    for x, y in loader:\n        out = model(x)\n    model.train()\n\n"
        "for step, (x, y) in enumerate(train_loader):\n    loss = f(model(x), y)\n    loss.backward()\n"
        "    optimizer.step()\n    if step % 500 == 0:\n        validate(model, val_loader)\n",
    )
    INVALID = (
        Invalid(
            "import torch\n\n@torch.no_grad()\ndef evaluate(model, loader):\n    model.eval()\n"
            "    total = 0\n    for x, y in loader:\n        total += (model(x).argmax(1) == y).sum()\n"
            "    return total\n",
            instead="import torch\n\n@torch.inference_mode()\ndef evaluate(model, loader):\n"
            "    model.eval()\n    total = 0\n    for x, y in loader:\n"
            "        total += (model(x).argmax(1) == y).sum()\n    return total\n",
        ),
        "import torch\n\ndef validate(model, val_loader):\n    model.eval()\n    with torch.no_grad():\n"
        "        for x, y in val_loader:\n            out = model(x)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        lowered = ctx.source.lower()
        if "fsdp" in lowered or "fully_shard" in lowered or "deepspeed" in lowered:
            return  # inference tensors break FSDP's (and DeepSpeed's) training afterwards
        in_training = self._called_while_training(ctx)
        for kind in (ast.FunctionDef, ast.AsyncFunctionDef):
            for func in ctx.by_type[kind]:
                assert isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef)
                if func.name in in_training:
                    continue
                for deco in func.decorator_list:
                    if self._plain_no_grad(ctx, deco) and self._evaluates(
                        ctx, func.body, func.body
                    ):
                        yield Report(deco)
        for with_ in ctx.by_type[ast.With]:
            assert isinstance(with_, ast.With)
            scope = ctx.enclosing_function(with_)
            if scope is None or scope.name in in_training:
                continue  # a top-level block of a script, or evaluation in mid-training
            for item in with_.items:
                if self._plain_no_grad(ctx, item.context_expr) and self._evaluates(
                    ctx, with_.body, scope.body
                ):
                    yield Report(item.context_expr)

    @staticmethod
    def _called_while_training(ctx: Context) -> set[str]:
        """The names called (``f(...)``, ``self.f(...)``) inside a training loop: one walk of
        each loop, once per file."""
        out: set[str] = set()
        for loop in ctx.loops.training_loops:
            for node in ast.walk(loop):
                if isinstance(node, ast.Call):
                    target = node.func
                    if isinstance(target, ast.Name):
                        out.add(target.id)
                    elif isinstance(target, ast.Attribute):
                        out.add(target.attr)
        return out

    @staticmethod
    def _plain_no_grad(ctx: Context, expr: ast.AST) -> bool:
        target = expr.func if isinstance(expr, ast.Call) else expr
        return ctx.qualname(target) in {"torch.no_grad", "torch.autograd.grad_mode.no_grad"}

    @staticmethod
    def _evaluates(ctx: Context, region: list[ast.stmt], scope: list[ast.stmt]) -> bool:
        nodes = list(iter_region(region, conditional=True))
        has_loop = any(isinstance(n, ast.For | ast.While) for n in nodes)
        trains = any(isinstance(n, ast.Call) and ctx.loops.is_backward(n) for n in nodes)
        calls_eval = any(
            isinstance(n, ast.Call) and method_name(n) == "eval" and not n.args
            for n in iter_region(scope, conditional=True)
        )
        return has_loop and calls_eval and not trains
