"""The calls of an optimizer step and their order: accumulation, autocast, clipping,
scheduling, zeroing gradients."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Edit, Invalid, Report, Rule, end_of
from generator.lint.syntax import is_const, iter_region, kwarg, method_name, receiver

_CLIP = {
    "torch.nn.utils.clip_grad_norm",
    "torch.nn.utils.clip_grad.clip_grad_norm",
    "torch.nn.utils.clip_grad_norm_",
    "torch.nn.utils.clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_value_",
}
_DDP = {
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
}


class BackwardInAutocast(Rule):
    """Only the forward pass and the loss belong inside `autocast`: backward already runs
    each op in the dtype its forward used, and PyTorch documents backward under autocast
    as not recommended. Leave the `with` block before calling `backward()`."""

    code = "PTT027"
    name = "backward-in-autocast"
    severity = "warning"
    message = "`backward()` inside an autocast block: leave the block first"
    message_zh = "`backward()` 写在了 autocast 块里：请在 autocast 块之外调用 `backward()`"
    why_zh = (
        "只有前向传播和损失计算应该放在 `autocast` 里：反向传播本来就会让每个算子沿用前向时的 dtype，"
        "PyTorch 文档也明确表示不建议在 autocast 下做反向传播。请先退出 `with` 块，再调用 `backward()`。"
    )
    tip = "autocast-mixed-precision"
    VALID = (
        "import torch\nwith torch.autocast('cuda', dtype=torch.bfloat16):\n    loss = f(model(x), y)\n"
        "loss.backward()\n",
        "import torch\nwith torch.autocast('cuda', enabled=False):\n    loss = f(x)\n    loss.backward()\n",
    )
    INVALID = (
        "import torch\nwith torch.amp.autocast('cuda'):\n    loss = f(model(x), y)\n"
        "    scaler.scale(loss).backward()\n",
        "import torch\nfrom contextlib import nullcontext\n"
        "ctx = nullcontext() if cpu else torch.amp.autocast(device_type='cuda')\n"
        "with ctx:\n    loss = f(x)\n    loss.backward()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for kind in (ast.With, ast.AsyncWith):
            for with_ in ctx.by_type[kind]:
                assert isinstance(with_, ast.With | ast.AsyncWith)
                if not any(ctx.is_autocast_item(i.context_expr) for i in with_.items):
                    continue
                for node in iter_region(with_.body, conditional=True):
                    if isinstance(node, ast.Call) and ctx.loops.is_backward(node):
                        yield Report(node)


class SchedulerBeforeOptimizer(Rule):
    """Since PyTorch 1.1 `scheduler.step()` belongs after `optimizer.step()`: called first,
    the schedule skips its first value (PyTorch warns), and called per micro-batch it runs
    N times too fast. Step the scheduler right after the optimizer, once per optimizer
    step (or once per epoch for epoch-based schedules). The order is checked in the loop's
    body and inside the `if` blocks of the loop, such as the accumulation guard
    `if (i + 1) % accum == 0:`."""

    code = "PTT029"
    name = "scheduler-before-optimizer"
    severity = "error"
    message = (
        "`scheduler.step()` comes before `optimizer.step()`: step the scheduler after the optimizer"
    )
    message_zh = (
        "`scheduler.step()` 在 `optimizer.step()` 之前调用：请在优化器之后再更新学习率调度器"
    )
    why_zh = (
        "从 PyTorch 1.1 起，`scheduler.step()` 应该在 `optimizer.step()` 之后调用：放在前面，调度会跳过"
        "第一个学习率值（PyTorch 会发出警告）；每个微批次都调用，调度进度就会变成 N 倍速。请紧跟在优化器之后更新"
        "学习率调度器，优化器每更新一次就调用一次（按 epoch 调度的则每个 epoch 一次）。循环体内以及循环中的"
        " `if` 块里（例如梯度累积的判断 `if (i + 1) % accum == 0:`）都会检查这一顺序。"
    )
    tip = "lr-scheduler-order"
    VALID = (
        "for x in data:\n    loss = f(x)\n    loss.backward()\n    optimizer.step()\n"
        "    scheduler.step()\n",
        "for epoch in range(10):\n    train_one_epoch()\n    scheduler.step(val_loss)\n",
    )
    INVALID = (
        Invalid(
            "for i, x in enumerate(data):\n    f(x).backward()\n    scheduler.step()\n"
            "    if (i + 1) % 4 == 0:\n        optimizer.step()\n",
            instead="for i, x in enumerate(data):\n    f(x).backward()\n"
            "    if (i + 1) % 4 == 0:\n        optimizer.step()\n        scheduler.step()\n",
        ),
        "def train(loader):\n    for x in loader:\n        f(x).backward()\n        optimizer.step()\n\n"
        "for epoch in range(90):\n    lr_scheduler.step()\n    train(loader)\n",
        # inside the accumulation guard
        Invalid(
            "for i, (x, y) in enumerate(loader):\n    (f(model(x), y) / accum).backward()\n"
            "    if (i + 1) % accum == 0:\n        scheduler.step()\n        optimizer.step()\n"
            "        optimizer.zero_grad()\n",
            instead="for i, (x, y) in enumerate(loader):\n    (f(model(x), y) / accum).backward()\n"
            "    if (i + 1) % accum == 0:\n        optimizer.step()\n        scheduler.step()\n"
            "        optimizer.zero_grad()\n",
        ),
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for kind in (ast.For, ast.While, ast.AsyncFor):
            for loop in ctx.by_type[kind]:
                assert isinstance(loop, ast.For | ast.While | ast.AsyncFor)
                for body in self._blocks(loop.body):
                    yield from self._order(ctx, body)

    @classmethod
    def _blocks(cls, body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
        """The loop's body and the bodies of the ``if`` blocks in it (not nested loops)."""
        yield body
        for stmt in body:
            if isinstance(stmt, ast.If):
                yield from cls._blocks(stmt.body)
                if stmt.orelse:
                    yield from cls._blocks(stmt.orelse)

    @staticmethod
    def _order(ctx: Context, body: list[ast.stmt]) -> Iterator[Report]:
        for i, stmt in enumerate(body):
            if not (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Call)
                and ctx.loops.is_scheduler_step(stmt.value)
            ):
                continue
            if any(ctx.loops.steps_optimizer(s) for s in body[:i]):
                break
            if any(ctx.loops.steps_optimizer(s) for s in body[i + 1 :]):
                yield Report(stmt.value)
            break


def _clip_calls(ctx: Context) -> list[ast.Call]:
    out = list(ctx.calls(*_CLIP))
    out += [
        c
        for c in ctx.methods("clip_grad_norm_", "clip_grad_value_", "clip_grad_norm")
        if c not in out
    ]
    return out


class ClipAfterStep(Rule):
    """`clip_grad_norm_` changes the gradients that the *next* `optimizer.step()` will
    read. Called after the step, the update has already used the raw gradients and the
    clipped ones are thrown away by `zero_grad()`. Clip between `backward()` and
    `step()`."""

    code = "PTT030"
    name = "clip-after-step"
    severity = "error"
    message = "gradients clipped after `optimizer.step()`: clip between `backward()` and `step()`"
    message_zh = "梯度在 `optimizer.step()` 之后才裁剪：请在 `backward()` 和 `step()` 之间裁剪"
    why_zh = (
        "`clip_grad_norm_` 修改的是*下一次* `optimizer.step()` 要读取的梯度。在更新之后才调用，这次更新已经"
        "用了未裁剪的梯度，裁剪后的梯度又会被 `zero_grad()` 清掉。请在 `backward()` 和 `step()` 之间做梯度裁剪。"
    )
    tip = "gradient-clipping"
    VALID = (
        "from torch import nn\nloss.backward()\nnn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "optimizer.step()\n",
    )
    INVALID = (
        "from torch import nn\nloss.backward()\noptimizer.step()\n"
        "norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        clips = set(_clip_calls(ctx))
        if not clips:
            return
        for block in ctx.blocks:
            stepped = False
            for stmt in block:
                if stepped:
                    for node in iter_region([stmt], conditional=True):
                        if isinstance(node, ast.Call) and ctx.loops.is_backward(node):
                            stepped = False
                            break
                        if node in clips:
                            yield Report(node)
                if (
                    isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Call)
                    and ctx.loops.is_optimizer_step(stmt.value)
                ):
                    stepped = True


class ClipScaledGradients(Rule):
    """After `scaler.scale(loss).backward()` the gradients are multiplied by the loss
    scale (65536 at first), so a clipping threshold applied to them means nothing. Call
    `scaler.unscale_(optimizer)` before clipping; `scaler.step` then does not unscale
    again."""

    code = "PTT031"
    name = "clip-scaled-gradients"
    severity = "error"
    message = "gradients clipped while still scaled by `GradScaler`: call `scaler.unscale_(optimizer)` first"
    message_zh = "梯度仍被 `GradScaler` 放大着就做了裁剪：请先调用 `scaler.unscale_(optimizer)`"
    why_zh = (
        "`scaler.scale(loss).backward()` 之后，梯度都乘上了损失缩放系数（初始为 65536），对它们应用裁剪阈值"
        "毫无意义。请在裁剪之前调用 `scaler.unscale_(optimizer)`；之后 `scaler.step` 不会再重复反缩放。"
    )
    tip = "gradscaler-unscale-before-clipping"
    VALID = (
        "from torch import nn\nscaler.scale(loss).backward()\nscaler.unscale_(optimizer)\n"
        "nn.utils.clip_grad_norm_(model.parameters(), 1.0)\nscaler.step(optimizer)\n",
    )
    INVALID = (
        "from torch import nn\nscaler.scale(loss).backward()\n"
        "nn.utils.clip_grad_norm_(model.parameters(), 1.0)\nscaler.step(optimizer)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        if ctx.methods("unscale_"):
            return
        scaled = [
            c
            for c in ctx.methods("backward")
            if isinstance(recv := receiver(c), ast.Call) and method_name(recv) == "scale"
        ]
        for clip in _clip_calls(ctx):
            scope = ctx.enclosing_function(clip)
            if any(ctx.enclosing_function(s) is scope and s.lineno <= clip.lineno for s in scaled):
                yield Report(clip)


class ZeroGradSetToNoneFalse(Rule):
    """`zero_grad(set_to_none=False)` fills every gradient with zeros: a kernel per
    parameter, and the gradient memory stays allocated between steps. The default
    (`set_to_none=True`, since PyTorch 2.0) frees it and lets `backward()` write fresh
    gradients. Code that reads `.grad` after zeroing must then expect `None`.

    Not reported in a file that builds DDP with `gradient_as_bucket_view=True`: there the
    gradients are views into DDP's buckets, which stay allocated anyway, and keeping the
    views lets the next backward accumulate into them instead of being copied in. A flag
    whose default the file states as False (`zero_grad(set_to_none=args.set_grads_to_none)`
    with `action="store_true"`) is reported with that default named, without a fix."""

    code = "PTT032"
    name = "zero-grad-set-to-none-false"
    severity = "warning"
    message = (
        "`zero_grad(set_to_none=False)` keeps and zero-fills every gradient: use `zero_grad()`"
    )
    message_zh = "`zero_grad(set_to_none=False)` 会保留并用零填充每个梯度：请直接用 `zero_grad()`"
    why_zh = (
        "`zero_grad(set_to_none=False)` 用零填充每个梯度：每个参数启动一个 kernel，梯度占用的显存在两步"
        "之间也一直不释放。默认的 `set_to_none=True`（PyTorch 2.0 起）会释放它们，让 `backward()` 写入"
        "新的梯度。清零之后还读取 `.grad` 的代码，这时需要预期得到 `None`。取自命令行参数、且文件写明其默认值"
        '为 False 的设置（`zero_grad(set_to_none=args.set_grads_to_none)`，`action="store_true"`），报告时会注明'
        "这个默认值，不提供自动修复。"
    )
    message_args = {"flag": "--set_grads_to_none False"}
    variants = {
        "default": (
            "`zero_grad()` keeps and zero-fills every gradient with the default `{flag}`: make `set_to_none=True` the default",
            "在默认的 `{flag}` 下，`zero_grad()` 会保留并用零填充每个梯度：请把 `set_to_none=True` 作为默认值",
        )
    }
    tip = "zero-grad-set-to-none"
    fixable = True
    fix_safety = "unsafe"
    fix_note = (
        "It drops `set_to_none=False`: gradients become `None` instead of zeros, which code "
        "that reads `.grad` after zeroing must expect."
    )
    fix_note_zh = (
        "修复会去掉 `set_to_none=False`：梯度变成 `None` 而不是零，清零之后还读取 `.grad` 的代码"
        "必须能处理这种情况。"
    )
    VALID = (
        "optimizer.zero_grad()\nmodel.zero_grad(set_to_none=True)\n",
        "ddp = DDP(model, gradient_as_bucket_view=True)\nddp.zero_grad(set_to_none=False)\n",
    )
    INVALID = (
        Invalid("optimizer.zero_grad(set_to_none=False)\n", "optimizer.zero_grad()\n"),
        Invalid("model.zero_grad(False)\n", "model.zero_grad()\n"),
        Invalid(
            "ddp = DDP(model, gradient_as_bucket_view=False)\nddp.zero_grad(set_to_none=False)\n",
            "ddp = DDP(model, gradient_as_bucket_view=False)\nddp.zero_grad()\n",
        ),
        # a flag whose default is False: reported with the default named, not fixed
        "import argparse\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--set_grads_to_none', action='store_true')\nargs = parser.parse_args()\n"
        "for x in data:\n    f(model(x)).backward()\n    optimizer.step()\n"
        "    optimizer.zero_grad(set_to_none=args.set_grads_to_none)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        if not ctx.methods("zero_grad"):
            return
        bucket_views = any(
            isinstance(node, ast.keyword)
            and node.arg == "gradient_as_bucket_view"
            and is_const(node.value, True)
            for node in ctx.by_type[ast.keyword]
        )
        if bucket_views:
            return
        for call in ctx.methods("zero_grad"):
            kw = kwarg(call, "set_to_none")
            flag = kw.value if kw is not None else (call.args[0] if call.args else None)
            found = ctx.flags.literal_or_default(flag, False)
            if found is False:
                continue
            if found is not True:
                yield Report(call, args={"flag": found.describe()}, variant="default")
                continue
            only = len(call.args) + len(call.keywords) == 1
            yield Report(call, [Edit(end_of(call.func), end_of(call), "()")] if only else [])


class ManualGradZero(Rule):
    """Zeroing each `p.grad` by hand (`p.grad.zero_()`, `p.grad.data.zero_()`) launches a
    kernel per parameter and keeps all gradient memory allocated. `optimizer.zero_grad()`
    (or `model.zero_grad()`) sets the gradients to `None` instead. Code written from scratch
    with no optimizer (a manual SGD update) is told to set `p.grad = None` itself."""

    code = "PTT033"
    name = "manual-grad-zero"
    severity = "warning"
    message = "gradients zeroed by hand: call `optimizer.zero_grad()`, which sets them to `None`"
    message_zh = "手动把梯度清零：请调用 `optimizer.zero_grad()`，它会把梯度设为 `None`"
    variants = {
        "no_optimizer": (
            "gradients zeroed by hand: set them to `None` (`w.grad = None`), which frees their memory",
            "手动把梯度清零：请直接把梯度设为 `None`（`w.grad = None`），这样还能释放它们占用的显存",
        )
    }
    why_zh = (
        "手动清零每个 `p.grad`（`p.grad.zero_()`、`p.grad.data.zero_()`）会为每个参数启动一个 kernel，"
        "并让所有梯度一直占着显存。`optimizer.zero_grad()`（或 `model.zero_grad()`）则把梯度设为 `None`。"
        "从零手写、没有优化器的代码（手动做 SGD 更新），提示改为自己写 `p.grad = None`。"
    )
    tip = "zero-grad-set-to-none"
    VALID = ("optimizer.zero_grad()\nfor p in model.parameters():\n    p.grad = None\n",)
    INVALID = (
        Invalid(
            "for p in model.parameters():\n    if p.grad is not None:\n        p.grad.zero_()\n",
            instead="optimizer.zero_grad()\n",
        ),
        "w.grad.data.zero_()\n",
        # from scratch, without an optimizer: the message says `w.grad = None`
        Invalid(
            "import torch\nw = torch.randn(3, requires_grad=True)\nfor x, y in data:\n"
            "    loss = ((x @ w - y) ** 2).mean()\n    loss.backward()\n    with torch.no_grad():\n"
            "        w -= 0.1 * w.grad\n    w.grad.zero_()\n",
            instead="import torch\nw = torch.randn(3, requires_grad=True)\nfor x, y in data:\n"
            "    loss = ((x @ w - y) ** 2).mean()\n    loss.backward()\n    with torch.no_grad():\n"
            "        w -= 0.1 * w.grad\n    w.grad = None\n",
        ),
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for call in ctx.methods("zero_"):
            recv = receiver(call)
            if isinstance(recv, ast.Attribute) and recv.attr == "data":
                recv = recv.value
            if not (isinstance(recv, ast.Attribute) and recv.attr == "grad"):
                continue
            func = ctx.enclosing_function(call)
            if func is None or func.name != "zero_grad":
                yield Report(call, variant=None if self._has_optimizer(ctx) else "no_optimizer")

    @staticmethod
    def _has_optimizer(ctx: Context) -> bool:
        """Whether the file builds or uses an optimizer (or zeroes a model's gradients)."""
        if ctx.methods("zero_grad", "step"):
            return True
        return any(
            (ctx.qualname(c.func) or "").startswith("torch.optim.")
            for c in ctx.by_type[ast.Call]
            if isinstance(c, ast.Call)
        )
