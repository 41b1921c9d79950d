"""Gradient accumulation: dividing the loss, and skipping DDP's all-reduce on the micro-batches
that do not step."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Report, Rule
from generator.lint.syntax import iter_region, last_name, method_name, receiver
from generator.lint.training import Loop

_DDP = {
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
}


def _has_mod(test: ast.AST) -> bool:
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(test))


def _accumulating_ifs(ctx: Context, loop: Loop) -> list[ast.If]:
    """``if (i + 1) % N == 0:`` blocks of a loop that step the optimizer."""
    return [
        node
        for node in iter_region(loop.body)
        if isinstance(node, ast.If)
        and _has_mod(node.test)
        and any(ctx.loops.steps_optimizer(s, follow=False) for s in node.body)
    ]


def _scales_gradients(ctx: Context, loop: Loop) -> bool:
    """Whether the loop rescales the gradients before stepping: ``scale_grads_(model, 1 / n)``
    (torchtune), ``p.grad.div_(n)``, ``p.grad /= n``."""
    for node in ctx.loops.all_nodes(loop):
        if isinstance(node, ast.Call):
            name = last_name(node.func)
            if name in {"scale_grads_", "scale_grads"}:
                return True
            recv = receiver(node)
            if isinstance(recv, ast.Attribute) and recv.attr == "data":
                recv = recv.value
            if name in {"div_", "mul_"} and isinstance(recv, ast.Attribute) and recv.attr == "grad":
                return True
        elif (
            isinstance(node, ast.AugAssign)
            and isinstance(node.op, ast.Div | ast.Mult)
            and isinstance(node.target, ast.Attribute)
            and node.target.attr == "grad"
        ):
            return True
    return False


def _decay_rescaled(ctx: Context, loop: Loop) -> bool:
    """Whether the file rescales the weight decay by the accumulation the loop's guard uses
    (``hyp['weight_decay'] *= batch_size * accumulate / nbs``): the loss is a sum over the
    accumulated batch on purpose, and the decay is matched to it."""
    divisors: set[str] = set()
    for guard in _accumulating_ifs(ctx, loop):
        for n in ast.walk(guard.test):
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod):
                divisors |= {x.id for x in ast.walk(n.right) if isinstance(x, ast.Name)}
    if not divisors:
        return False
    for node in [*ctx.by_type[ast.Assign], *ctx.by_type[ast.AugAssign]]:
        assert isinstance(node, ast.Assign | ast.AugAssign)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any("weight_decay" in ast.unparse(t) for t in targets) and any(
            isinstance(x, ast.Name) and x.id in divisors for x in ast.walk(node.value)
        ):
            return True
    return False


def _divides(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div | ast.FloorDiv))
        or (isinstance(n, ast.Call) and method_name(n) in {"div", "div_", "true_divide"})
        for n in ast.walk(node)
    )


class AccumulationNotDivided(Rule):
    """Gradients add up over the `backward()` calls of an accumulation group, so stepping
    every N micro-batches without dividing each loss by N applies N times the gradient of
    one batch's mean loss: a silently larger learning rate. Divide the loss by the number of
    micro-batches in the group (the last group may be shorter). Not reported when nothing
    accumulates or the gradients are scaled otherwise: `zero_grad()` runs every iteration,
    another optimizer steps every iteration (a WGAN critic, with the generator stepped every
    n_critic iterations), the gradients are rescaled before the step (`scale_grads_`,
    `p.grad.div_`), or the loss is a sum over the accumulated batch on purpose, with the
    weight decay rescaled by the accumulation to match (YOLO's `hyp['weight_decay'] *=
    batch_size * accumulate / nbs`)."""

    code = "PTT026"
    name = "accumulation-not-divided"
    severity = "error"
    message = "optimizer steps every N micro-batches but the loss is not divided by N"
    message_zh = "优化器每 N 个微批次更新一次，损失却没有除以 N"
    why_zh = (
        "在一个累积组内，梯度会在多次 `backward()` 之间累加，所以每 N 个微批次更新一次、却不把每个"
        "损失除以 N，得到的是单个批次平均损失梯度的 N 倍：相当于悄悄放大了学习率。请把损失除以该组的"
        "微批次数（最后一组可能更短）。以下情况不会报告：每次迭代都调用 `zero_grad()`（梯度根本没有累积）、"
        "另一个优化器每次迭代都更新（例如 WGAN 的判别器，生成器每 n_critic 次迭代才更新一次）、梯度在"
        "更新前另行缩放（`scale_grads_`、`p.grad.div_`），或者损失本来就是整个累积批次上的总和、权重衰减"
        "也按累积步数相应缩放（YOLO 的 `hyp['weight_decay'] *= batch_size * accumulate / nbs`）。"
    )
    tip = "gradient-accumulation"
    VALID = (
        "for i, (x, y) in enumerate(data):\n    loss = f(x, y) / accum\n    loss.backward()\n"
        "    if (i + 1) % accum == 0:\n        optimizer.step()\n        optimizer.zero_grad()\n",
        "for i, (x, y) in enumerate(data):\n    loss = f(x, y)\n    loss = loss / accum\n"
        "    scaler.scale(loss).backward()\n    if (i + 1) % accum == 0:\n        scaler.step(optimizer)\n",
        # WGAN: the critic steps every iteration, the generator every n_critic
        "for i, (imgs, _) in enumerate(loader):\n    optimizer_D.zero_grad()\n"
        "    loss_D = -D(imgs).mean() + D(G(z).detach()).mean()\n    loss_D.backward()\n"
        "    optimizer_D.step()\n    if i % n_critic == 0:\n        optimizer_G.zero_grad()\n"
        "        loss_G = -D(G(z)).mean()\n        loss_G.backward()\n        optimizer_G.step()\n",
        # summed over tokens, then scaled by the token count before the step (torchtune)
        "for idx, batch in enumerate(loader):\n    current_loss = loss_fn(model(batch)) * tokens\n"
        "    current_loss.backward()\n    if (idx + 1) % accum == 0:\n"
        "        scale_grads_(model, 1 / num_tokens)\n        optimizer.step()\n"
        "        optimizer.zero_grad()\n",
        # a per-batch sum on purpose, with the weight decay scaled to the accumulated batch
        "import torch\nnominal = 64\naccumulate = max(round(nominal / batch_size), 1)\n"
        "hyp['weight_decay'] *= batch_size * accumulate / nominal\n"
        "optimizer = torch.optim.SGD(params, lr=hyp['lr0'], weight_decay=hyp['weight_decay'])\n"
        "for i, (imgs, targets) in enumerate(loader):\n    loss = compute_loss(model(imgs), targets)  # summed over the batch\n"
        "    loss.backward()\n    if i % accumulate == 0:\n        optimizer.step()\n"
        "        optimizer.zero_grad()\n",
    )
    INVALID = (
        "for i, (x, y) in enumerate(data):\n    loss = f(x, y)\n    loss.backward()\n"
        "    if (i + 1) % accum == 0:\n        optimizer.step()\n        optimizer.zero_grad()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for loop in ctx.loops.training_loops:
            if not _accumulating_ifs(ctx, loop):
                continue
            steps = ctx.loops.step_nodes(loop)
            if (
                any(
                    isinstance(n, ast.Call)
                    and (ctx.loops.is_optimizer_step(n) or method_name(n) == "zero_grad")
                    for n in steps
                )
                or _scales_gradients(ctx, loop)
                or _decay_rescaled(ctx, loop)
            ):
                continue  # nothing accumulates, or the gradients are scaled another way
            for node in steps:
                if not (isinstance(node, ast.Call) and ctx.loops.is_backward(node)):
                    continue
                for name in ctx.loops.backward_losses(node):
                    values = [
                        n
                        for n in iter_region(loop.body, conditional=True)
                        if (
                            isinstance(n, ast.Assign)
                            and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
                        )
                        or (
                            isinstance(n, ast.AugAssign)
                            and isinstance(n.target, ast.Name)
                            and n.target.id == name
                        )
                    ]
                    if values and not any(
                        _divides(v.value)
                        or (isinstance(v, ast.AugAssign) and isinstance(v.op, ast.Div))
                        for v in values
                    ):
                        yield Report(node)


class DdpAccumulationNoSync(Rule):
    """Under `DistributedDataParallel` every `backward()` all-reduces the gradients across
    processes. When several micro-batches are accumulated before a step, only the last
    all-reduce is needed: run the others (forward and backward) inside
    `ddp_model.no_sync()`. A backward inside another `with` that names a sync helper
    (`misc.ddp_sync(ddp, last_round)`) is taken to handle it."""

    code = "PTT034"
    name = "ddp-accumulation-without-no-sync"
    severity = "warning"
    message = "DDP gradients are all-reduced on every accumulated micro-batch: wrap the others in `no_sync()`"
    message_zh = "DDP 在每个累积的微批次上都做梯度 all-reduce：把其余微批次包在 `no_sync()` 里"
    why_zh = (
        "在 `DistributedDataParallel` 下，每次 `backward()` 都会在进程间 all-reduce 梯度。在更新之前累积"
        "多个微批次时，只有最后一次 all-reduce 是必要的：其余微批次的前向和反向都应放在"
        " `ddp_model.no_sync()` 里运行。反向传播位于另一个名字里带 sync 的 `with` 块中时"
        "（例如 `misc.ddp_sync(ddp, last_round)`），视为已经处理。"
    )
    tip = "ddp-no-sync-accumulation"
    VALID = (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(net)\n"
        "for i, x in enumerate(data):\n    with model.no_sync() if (i + 1) % 4 else nullcontext():\n"
        "        (f(model(x)) / 4).backward()\n    if (i + 1) % 4 == 0:\n        optimizer.step()\n",
    )
    INVALID = (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(net)\n"
        "for i, x in enumerate(data):\n    loss = f(model(x)) / 4\n    loss.backward()\n"
        "    if (i + 1) % 4 == 0:\n        optimizer.step()\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(net)\n"
        "def step(batches):\n    for x in batches:\n        (f(model(x)) / len(batches)).backward()\n"
        "    optimizer.step()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        if (
            not ctx.calls(*_DDP)
            or "no_sync" in ctx.source
            or "require_backward_grad_sync" in ctx.source
        ):
            return
        for loop in ctx.loops.training_loops:
            backwards = [
                n
                for n in ctx.loops.step_nodes(loop)
                if isinstance(n, ast.Call)
                and ctx.loops.is_backward(n)
                and not self._in_sync_block(ctx, n)
            ]
            if not backwards:
                continue
            if _accumulating_ifs(ctx, loop) or (
                not any(ctx.loops.steps_optimizer(s) for s in loop.body)
                and self._steps_after(ctx, loop)
            ):
                yield Report(backwards[0])

    @staticmethod
    def _in_sync_block(ctx: Context, node: ast.AST) -> bool:
        """Inside ``with <something sync>(...)``: a helper that decides when DDP syncs
        (EDM's ``misc.ddp_sync(ddp, last_round)``, ``maybe_no_sync``)."""
        return any(
            isinstance(a, ast.With)
            and any("sync" in ctx.segment(i.context_expr).lower() for i in a.items)
            for a in ctx.ancestors(node)
        )

    @staticmethod
    def _steps_after(ctx: Context, loop: Loop) -> bool:
        for block in ctx.blocks:
            if loop in block:
                return any(ctx.loops.steps_optimizer(s) for s in block[block.index(loop) + 1 :])
        return False
