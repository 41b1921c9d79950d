"""The calls of an optimizer step and their order: accumulation, autocast, clipping,
scheduling, zeroing gradients, train and eval modes."""

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


def _has_mod(test: ast.AST) -> bool:
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(test))


def _accumulating_ifs(ctx: Context, loop: ast.AST) -> list[ast.If]:
    """``if (i + 1) % N == 0:`` blocks of a loop that step the optimizer."""
    return [
        node
        for node in iter_region(loop.body)  # type: ignore[attr-defined]
        if isinstance(node, ast.If)
        and _has_mod(node.test)
        and any(ctx.steps_optimizer(s, follow=False) for s in node.body)
    ]


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
    micro-batches in the group (the last group may be shorter)."""

    code = "PTT026"
    name = "accumulation-not-divided"
    severity = "error"
    message = "optimizer steps every N micro-batches but the loss is not divided by N"
    tip = "gradient-accumulation"
    VALID = (
        "for i, (x, y) in enumerate(data):\n    loss = f(x, y) / accum\n    loss.backward()\n"
        "    if (i + 1) % accum == 0:\n        optimizer.step()\n        optimizer.zero_grad()\n",
        "for i, (x, y) in enumerate(data):\n    loss = f(x, y)\n    loss = loss / accum\n"
        "    scaler.scale(loss).backward()\n    if (i + 1) % accum == 0:\n        scaler.step(optimizer)\n",
    )
    INVALID = (
        "for i, (x, y) in enumerate(data):\n    loss = f(x, y)\n    loss.backward()\n"
        "    if (i + 1) % accum == 0:\n        optimizer.step()\n        optimizer.zero_grad()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for loop in ctx.training_loops:
            if not _accumulating_ifs(ctx, loop):
                continue
            for node in ctx.step_nodes(loop):
                if not (isinstance(node, ast.Call) and ctx.is_backward(node)):
                    continue
                for name in ctx.backward_losses(node):
                    values = [
                        n
                        for n in iter_region(loop.body, conditional=True)  # type: ignore[attr-defined]
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


class BackwardInAutocast(Rule):
    """Only the forward pass and the loss belong inside `autocast`: backward already runs
    each op in the dtype its forward used, and PyTorch documents backward under autocast
    as not recommended. Leave the `with` block before calling `backward()`."""

    code = "PTT027"
    name = "backward-in-autocast"
    severity = "warning"
    message = "`backward()` inside an autocast block: leave the block first"
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
                if not any(ctx.is_autocast_item(i.context_expr) for i in with_.items):  # type: ignore[attr-defined]
                    continue
                for node in iter_region(with_.body, conditional=True):  # type: ignore[attr-defined]
                    if isinstance(node, ast.Call) and ctx.is_backward(node):
                        yield Report(node)


class SchedulerBeforeOptimizer(Rule):
    """Since PyTorch 1.1 `scheduler.step()` belongs after `optimizer.step()`: called first,
    the schedule skips its first value (PyTorch warns), and called per micro-batch it runs
    N times too fast. Step the scheduler right after the optimizer, once per optimizer
    step (or once per epoch for epoch-based schedules)."""

    code = "PTT029"
    name = "scheduler-before-optimizer"
    severity = "error"
    message = (
        "`scheduler.step()` comes before `optimizer.step()`: step the scheduler after the optimizer"
    )
    tip = "lr-scheduler-order"
    VALID = (
        "for x in data:\n    loss = f(x)\n    loss.backward()\n    optimizer.step()\n"
        "    scheduler.step()\n",
        "for epoch in range(10):\n    train_one_epoch()\n    scheduler.step(val_loss)\n",
    )
    INVALID = (
        "for i, x in enumerate(data):\n    f(x).backward()\n    scheduler.step()\n"
        "    if (i + 1) % 4 == 0:\n        optimizer.step()\n",
        "def train(loader):\n    for x in loader:\n        f(x).backward()\n        optimizer.step()\n\n"
        "for epoch in range(90):\n    lr_scheduler.step()\n    train(loader)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for kind in (ast.For, ast.While, ast.AsyncFor):
            for loop in ctx.by_type[kind]:
                body = loop.body  # type: ignore[attr-defined]
                for i, stmt in enumerate(body):
                    if not (
                        isinstance(stmt, ast.Expr)
                        and isinstance(stmt.value, ast.Call)
                        and ctx.is_scheduler_step(stmt.value)
                    ):
                        continue
                    if any(ctx.steps_optimizer(s) for s in body[:i]):
                        break
                    if any(ctx.steps_optimizer(s) for s in body[i + 1 :]):
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
                        if isinstance(node, ast.Call) and ctx.is_backward(node):
                            stepped = False
                            break
                        if node in clips:
                            yield Report(node)
                if (
                    isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Call)
                    and ctx.is_optimizer_step(stmt.value)
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
            if isinstance(receiver(c), ast.Call) and method_name(receiver(c)) == "scale"  # type: ignore[arg-type]
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
    views lets the next backward accumulate into them instead of being copied in."""

    code = "PTT032"
    name = "zero-grad-set-to-none-false"
    severity = "warning"
    message = (
        "`zero_grad(set_to_none=False)` keeps and zero-fills every gradient: use `zero_grad()`"
    )
    tip = "zero-grad-set-to-none"
    fixable = True
    fix_safety = "safe"
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
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        bucket_views = any(
            isinstance(node, ast.keyword)
            and node.arg == "gradient_as_bucket_view"
            and is_const(node.value, True)
            for node in ast.walk(ctx.tree)
        )
        if bucket_views:
            return
        for call in ctx.methods("zero_grad"):
            kw = kwarg(call, "set_to_none")
            flag = kw.value if kw is not None else (call.args[0] if call.args else None)
            if not is_const(flag, False):
                continue
            only = len(call.args) + len(call.keywords) == 1
            yield Report(call, [Edit(end_of(call.func), end_of(call), "()")] if only else [])


class ManualGradZero(Rule):
    """Zeroing each `p.grad` by hand (`p.grad.zero_()`, `p.grad.data.zero_()`) launches a
    kernel per parameter and keeps all gradient memory allocated. `optimizer.zero_grad()`
    (or `model.zero_grad()`) sets the gradients to `None` instead."""

    code = "PTT033"
    name = "manual-grad-zero"
    severity = "warning"
    message = "gradients zeroed by hand: call `optimizer.zero_grad()`, which sets them to `None`"
    tip = "zero-grad-set-to-none"
    VALID = ("optimizer.zero_grad()\nfor p in model.parameters():\n    p.grad = None\n",)
    INVALID = (
        "for p in model.parameters():\n    if p.grad is not None:\n        p.grad.zero_()\n",
        "w.grad.data.zero_()\n",
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
                yield Report(call)


class DdpAccumulationNoSync(Rule):
    """Under `DistributedDataParallel` every `backward()` all-reduces the gradients across
    processes. When several micro-batches are accumulated before a step, only the last
    all-reduce is needed: run the others (forward and backward) inside
    `ddp_model.no_sync()`."""

    code = "PTT034"
    name = "ddp-accumulation-without-no-sync"
    severity = "warning"
    message = "DDP gradients are all-reduced on every accumulated micro-batch: wrap the others in `no_sync()`"
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
        for loop in ctx.training_loops:
            backwards = [
                n for n in ctx.step_nodes(loop) if isinstance(n, ast.Call) and ctx.is_backward(n)
            ]
            if not backwards:
                continue
            if _accumulating_ifs(ctx, loop) or (
                not any(ctx.steps_optimizer(s) for s in loop.body) and self._steps_after(ctx, loop)
            ):
                yield Report(backwards[0])

    @staticmethod
    def _steps_after(ctx: Context, loop: ast.AST) -> bool:
        for block in ctx.blocks:
            if loop in block:
                return any(ctx.steps_optimizer(s) for s in block[block.index(loop) + 1 :])
        return False


class EvalNeverUndone(Rule):
    """`model.eval()` switches Dropout off and makes BatchNorm use its running statistics
    until `model.train()` switches them back. A loop that evaluates between training steps
    and never calls `train()` trains every later step in evaluation mode. Call
    `model.train()` at the start of each epoch (or restore the mode after evaluating)."""

    code = "PTT035"
    name = "eval-never-undone"
    severity = "error"
    message = "`model.eval()` runs between training steps but nothing calls `model.train()` again"
    tip = "eval-mode-dropout-batchnorm"
    VALID = (
        "def evaluate(model):\n    model.eval()\n    out = model(x)\n    model.train()\n    return out\n\n"
        "for epoch in range(3):\n    for x in data:\n        f(model(x)).backward()\n"
        "        optimizer.step()\n    evaluate(model)\n",
    )
    INVALID = (
        "def evaluate(model):\n    model.eval()\n    return model(x)\n\n"
        "for epoch in range(3):\n    for x in data:\n        f(model(x)).backward()\n"
        "        optimizer.step()\n    evaluate(model)\n",
        "for epoch in range(3):\n    for x in data:\n        f(model(x)).backward()\n"
        "        optimizer.step()\n    model.eval()\n    validate(model)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        if ctx.methods("train") or not ctx.training_loops:
            return
        for call in ctx.methods("eval"):
            if call.args or call.keywords:
                continue
            sites: list[ast.AST] = [call]
            func = ctx.enclosing_function(call)
            if func is not None:
                sites += [
                    c
                    for c in ctx.by_type[ast.Call]
                    if isinstance(c, ast.Call)
                    and isinstance(c.func, ast.Name)
                    and c.func.id == func.name
                ]
            if any(self._in_training_loop(ctx, s) for s in sites):
                yield Report(call)

    @staticmethod
    def _in_training_loop(ctx: Context, node: ast.AST) -> bool:
        for anc in ctx.ancestors(node):
            if isinstance(anc, ast.For | ast.While | ast.AsyncFor) and any(
                ctx.trains(s) for s in anc.body
            ):
                return True
        return False
