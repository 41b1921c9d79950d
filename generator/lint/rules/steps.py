"""What the every-step rules share: the nodes of each step, the loss and the values that
live on the device. No rules here."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.syntax import iter_region, method_name, receiver
from generator.lint.training import Loop

_CONVERTED = {"item", "tolist", "detach", "numpy"}
#: Reads of a tensor's metadata: the host knows them without waiting for the GPU.
METADATA = {
    "dtype",
    "shape",
    "device",
    "ndim",
    "requires_grad",
    "is_cuda",
    "is_leaf",
    "grad_fn",
    "layout",
    "size",
    "dim",
    "numel",
    "nelement",
    "element_size",
    "is_contiguous",
    "is_floating_point",
    "get_device",
    "data_ptr",
}
TENSOR_TESTS = {
    "torch.isnan",
    "torch.isinf",
    "torch.isfinite",
    "torch.any",
    "torch.all",
    "torch.equal",
    "torch.allclose",
}


def with_calls(ctx: Context, qualnames: set[str]) -> Iterator[tuple[ast.With, ast.Call]]:
    """Each ``with`` block whose context manager is a call of one of ``qualnames``, with
    that call (``with torch.profiler.profile(...) as prof:``)."""
    for with_ in ctx.by_type[ast.With]:
        assert isinstance(with_, ast.With)
        for item in with_.items:
            expr = item.context_expr
            if isinstance(expr, ast.Call) and ctx.qualname(expr.func) in qualnames:
                yield with_, expr


def wraps_training(ctx: Context, body: list[ast.stmt]) -> bool:
    """Whether ``body`` holds a loop that trains, under a condition or not."""
    return any(
        isinstance(n, ast.For | ast.While) and ctx.loops.trains(n)
        for n in iter_region(body, conditional=True)
    )


def every_step(ctx: Context) -> Iterator[tuple[Loop, ast.AST, set[str]]]:
    """(loop, node, loss names) for every node that runs on every step of a training loop."""
    for loop in ctx.loops.training_loops:
        losses = ctx.loops.loss_names(loop)
        for node in ctx.loops.step_nodes(loop):
            yield loop, node, losses


def is_loss_value(node: ast.AST | None, losses: set[str]) -> bool:
    """``loss``, or a chain on it that is still a tensor (``loss.mean()``, ``loss[0]``); not
    its metadata (``loss.dtype``, ``loss.shape``, ``loss.size()``), which needs no sync."""
    while True:
        if isinstance(node, ast.Name):
            return node.id in losses
        if isinstance(node, ast.Call):
            if method_name(node) in _CONVERTED:
                return False
            node = node.func
        elif isinstance(node, ast.Attribute):
            if node.attr in METADATA:
                return False
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return False


def outputs(ctx: Context, loop: Loop) -> set[str]:
    """Names a loop assigns from calling a model (``out = model(x)``)."""
    out = set()
    for node in ctx.loops.all_nodes(loop):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and ctx.name_is_module(node.value.func)
        ):
            for target in node.targets:
                elts = target.elts if isinstance(target, ast.Tuple) else [target]
                out |= {e.id for e in elts if isinstance(e, ast.Name)}
    return out


def feeds_backward(ctx: Context, node: ast.AST, name: str) -> bool:
    """Whether ``name`` is used, in ``node``'s scope, to compute what ``backward()`` gets
    (directly, or through one assignment: ``total = sum(losses); total.backward()``)."""
    body = ctx.scope_body(node)
    key = ("feeds_backward", id(body))
    if key not in ctx.memo:  # once per scope, whatever the name
        ctx.memo[key] = _backward_inputs(ctx, body)
    return name in ctx.memo[key]


def _backward_inputs(ctx: Context, body: list[ast.stmt]) -> set[str]:
    """The names read to compute what the ``backward()`` calls of ``body`` get."""
    receivers: list[ast.AST] = []
    for n in iter_region(body, conditional=True):
        if isinstance(n, ast.Call) and ctx.loops.is_backward(n):
            recv = receiver(n)
            receivers += [recv, *n.args] if recv is not None else list(n.args)
    names = {r.id for r in receivers if isinstance(r, ast.Name)}
    values = [
        n.value
        for n in iter_region(body, conditional=True)
        if isinstance(n, ast.Assign | ast.AugAssign)
        and any(
            isinstance(t, ast.Name) and t.id in names
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        )
    ]
    return {x.id for r in [*receivers, *values] for x in ast.walk(r) if isinstance(x, ast.Name)}


def device_values(ctx: Context, loop: Loop) -> set[str]:
    """Names a training loop binds to values on the device: the loss, model outputs, what
    it moves with ``.to()``/``.cuda()``, and what it computes from those."""
    names = ctx.loops.loss_names(loop) | outputs(ctx, loop)
    assigns = [n for n in ctx.loops.all_nodes(loop) if isinstance(n, ast.Assign)]
    for _ in range(3):
        for node in assigns:
            if any(
                (isinstance(x, ast.Name) and x.id in names)
                or (isinstance(x, ast.Call) and method_name(x) in {"to", "cuda"})
                for x in ast.walk(node.value)
            ):
                for target in node.targets:
                    elts = target.elts if isinstance(target, ast.Tuple) else [target]
                    names |= {e.id for e in elts if isinstance(e, ast.Name)}
    return names
