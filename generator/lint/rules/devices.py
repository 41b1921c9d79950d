"""What holds a tensor on the device in a loop, which training loops run on the host, and
which loops evaluate: the facts the sync rules (`.sync_sites`) and others share. No rules
here."""

from __future__ import annotations

import ast

from generator.lint.analysis import Context
from generator.lint.rules.steps import METADATA, outputs
from generator.lint.rules.tensors import device_of
from generator.lint.syntax import (
    FUNCTIONS,
    iter_region,
    kwarg,
    last_name,
    method_name,
    receiver,
    root_name,
)
from generator.lint.training import Function, Loop, per_node

#: Factories that build a tensor on the host unless given a ``device``.
HOST_FACTORIES = {
    "torch.tensor",
    "torch.as_tensor",
    "torch.zeros",
    "torch.ones",
    "torch.full",
    "torch.empty",
}
_FACTORIES = HOST_FACTORIES | {
    "torch.randn",
    "torch.rand",
    "torch.randint",
    "torch.arange",
    "torch.zeros_like",
    "torch.ones_like",
    "torch.empty_like",
    "torch.full_like",
    "torch.randn_like",
    "torch.rand_like",
}
_CLIP = {"clip_grad_norm_", "clip_grad_norm"}
#: Calls whose result lives on the host: the value was copied (a sync, reported where it
#: happens) or never was a tensor.
TO_HOST = {"item", "tolist", "numpy", "cpu"}
SCALARS = {"float", "int", "bool"}


@per_node
def _nodes_of(ctx: Context, scope: ast.AST) -> list[ast.AST]:
    body = scope.body if isinstance(scope, (*FUNCTIONS, ast.Module)) else []
    return list(iter_region(body, conditional=True))


def scope_nodes(ctx: Context, node: ast.AST) -> list[ast.AST]:
    """The nodes of the function (or module) that holds ``node``, nested scopes left out:
    computed once per function. A shared list: do not change it."""
    return _nodes_of(ctx, ctx.enclosing_function(node) or ctx.tree)


def _scope_assigns(ctx: Context, node: ast.AST) -> list[ast.Assign]:
    return [n for n in scope_nodes(ctx, node) if isinstance(n, ast.Assign)]


def targets(node: ast.Assign) -> set[str]:
    """Names an assignment binds: ``x``, both sides of ``a, b = ...``, and the container of
    ``batch[k] = ...`` (not the owner of an attribute: ``ema.updates = n``)."""
    out: set[str] = set()
    for target in node.targets:
        elts = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
        for e in elts:
            if isinstance(e, ast.Starred):
                e = e.value
            while isinstance(e, ast.Subscript):
                e = e.value
            if isinstance(e, ast.Name) and e.id != "self":
                out.add(e.id)
    return out


def _on_device(ctx: Context, value: ast.AST) -> bool:
    """Whether an assigned value is placed on a device: a move (``.to(device)``,
    ``.cuda()``), a factory given a non-CPU ``device=``, or a clipped gradient norm."""
    for n in ast.walk(value):
        if not isinstance(n, ast.Call):
            continue
        if method_name(n) in {"to", "cuda"} and device_of(ctx, n)[0]:
            moved = receiver(n)
            while isinstance(moved, ast.Call):
                moved = moved.func.value if isinstance(moved.func, ast.Attribute) else moved.func
            if _module_like(ctx, moved):
                continue  # a model moved to the device: its outputs are tensors, it is not
            return True
        q = ctx.qualname(n.func) or ""
        kw = kwarg(n, "device")
        if q in _FACTORIES and kw is not None and not _is_cpu(kw.value):
            return True
        if last_name(n.func) in _CLIP:
            return True
    return False


def _module_like(ctx: Context, node: ast.AST | None) -> bool:
    """A model or a class instance: ``model``, ``D``, ``Net``."""
    if isinstance(node, ast.Name | ast.Attribute):
        name = last_name(node) or ""
        return ctx.name_is_module(node) or name[:1].isupper()
    return False


def _class_name(ctx: Context, func: ast.AST) -> bool:
    """Whether a call of ``func`` builds an object: a capitalised name that the file never
    assigns (``ModelEMA(model)``; ``D(x)`` with ``D = Discriminator()`` is a forward)."""
    name = last_name(func) or ""
    if not name[:1].isupper() or (ctx.qualname(func) or "").startswith("torch."):
        return False
    return not (isinstance(func, ast.Name) and name in ctx.assignments)


def _is_cpu(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == "cpu"


@per_node
def device_names_of(ctx: Context, loop: Loop) -> frozenset[str]:
    names = set(ctx.loops.loss_names(loop)) | outputs(ctx, loop)
    assigns = _scope_assigns(ctx, loop)
    assigns += [n for n in ctx.loops.all_nodes(loop) if isinstance(n, ast.Assign)]
    for node in assigns:
        if _on_device(ctx, node.value):
            names |= targets(node)
    for _ in range(3):
        before = len(names)
        for node in assigns:
            if _carries(ctx, node, names):
                names |= targets(node)
        if len(names) == before:
            break
    return frozenset(names)


def _carries(ctx: Context, node: ast.Assign, names: set[str]) -> bool:
    """Whether an assignment computes a device tensor from ``names``: arithmetic or torch
    ops on them, or a loss function's call; not a copy to the host, an object's
    construction (``ModelEMA(model)``) or a helper of this file that returns something
    else (``model, optimizer, step = load_checkpoint(path, model, optimizer)``)."""
    unpacked = any(isinstance(t, ast.Tuple | ast.List) for t in node.targets)
    return _carried(ctx, node.value, names, unpacked)


_REDUCERS = {"sum", "max", "min", "abs"}


def _carried(ctx: Context, value: ast.AST, names: set[str], unpacked: bool) -> bool:
    if isinstance(value, ast.IfExp):
        return any(_carried(ctx, v, names, unpacked) for v in (value.body, value.orelse))
    if host_value(ctx, value):
        return False
    if tensor_value(ctx, value, names):
        return True
    if not isinstance(value, ast.Call) or method_name(value) is not None:
        return False
    args = [*value.args, *(k.value for k in value.keywords)]
    if not any(tensor_value(ctx, a, names) for a in args):
        return False
    callee = last_name(value.func) or ""
    if isinstance(value.func, ast.Name) and callee in _REDUCERS:
        return True  # sum(losses)
    lossy = "loss" in callee.lower() or "criterion" in callee.lower()
    if lossy:
        return True  # criterion(out, y), loss_fn(...), compute_loss(pred, targets)
    if _class_name(ctx, value.func) or (callee in ctx.functions and not unpacked):
        return False  # an object built around the tensors, or a helper of this file
    return not unpacked  # a model's output, a function of tensors


def device_names(ctx: Context, loop: Loop) -> set[str]:
    """Names that hold tensors on the device in ``loop``: the loss, model outputs, what the
    loop or its function moves there or makes there, and what is computed from those (not
    through a copy to the host). A new set on each call."""
    return set(device_names_of(ctx, loop))


def host_value(ctx: Context, value: ast.AST) -> bool:
    """Whether a value has left the device (or never was a tensor): ``x.item()``,
    ``float(x)``, ``np.mean(...)``, ``len(x)``, a formatted string."""
    if isinstance(value, ast.BinOp):
        return all(
            isinstance(t, ast.Constant) or host_value(ctx, t) for t in (value.left, value.right)
        ) or any(
            host_value(ctx, t) for t in (value.left, value.right) if not isinstance(t, ast.Name)
        )
    if isinstance(value, ast.Call):
        if method_name(value) in TO_HOST:
            return True
        if isinstance(value.func, ast.Name) and value.func.id in SCALARS | {"len", "str"}:
            return True
        q = ctx.qualname(value.func) or ""
        return q.startswith(("numpy.", "math."))
    return isinstance(value, ast.JoinedStr | ast.Constant)


def tensor_value(ctx: Context, node: ast.AST | None, names: set[str] | frozenset[str]) -> bool:
    """Whether ``node`` evaluates to a tensor on the device: a name of ``names``, an element,
    attribute or method result of one (``loss.mean()``, ``pred[i]``, ``batch.y``), a torch
    function of one, arithmetic or a comparison with one. Metadata (``x.shape``,
    ``x.size()``) and values already on the host (``x.item()``, ``x.cpu()``) are not."""
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Attribute):
        return node.attr not in METADATA and tensor_value(ctx, node.value, names)
    if isinstance(node, ast.Subscript | ast.Starred):
        return tensor_value(ctx, node.value, names)
    if isinstance(node, ast.BinOp):
        return tensor_value(ctx, node.left, names) or tensor_value(ctx, node.right, names)
    if isinstance(node, ast.UnaryOp):
        return tensor_value(ctx, node.operand, names)
    if isinstance(node, ast.Compare):
        return tensor_compare(ctx, node, names)
    if isinstance(node, ast.Call):
        method = method_name(node)
        if method is not None:
            if method in TO_HOST or method in METADATA:
                return False
            q = ctx.qualname(node.func) or ""
            if not q.startswith("torch."):
                return tensor_value(ctx, receiver(node), names)
        q = ctx.qualname(node.func) or ""
        if q.startswith("torch.") and q not in HOST_FACTORIES:
            return any(tensor_value(ctx, a, names) for a in node.args)
    return False


def tensor_compare(ctx: Context, node: ast.Compare, names: set[str] | frozenset[str]) -> bool:
    """A comparison of tensor values (``x > 0``), not a membership or identity test (``"k"
    in outputs``, ``x is None``)."""
    if all(isinstance(op, ast.In | ast.NotIn | ast.Is | ast.IsNot) for op in node.ops):
        return False
    return any(tensor_value(ctx, v, names) for v in [node.left, *node.comparators])


def host_tensor(ctx: Context, node: ast.AST | None) -> bool:
    """Whether ``node`` is a name only ever assigned a host-built tensor (``torch.tensor(x)``
    with no ``device=``): reading such a tensor waits for no GPU."""
    if not isinstance(node, ast.Name):
        return False
    values = ctx.assignments.get(node.id, [])
    return bool(values) and all(
        isinstance(v, ast.Call)
        and ctx.qualname(v.func) in HOST_FACTORIES
        and not any(k.arg == "device" for k in v.keywords)
        for v in values
    )


# --- loops that run on the host, and evaluation loops ----------------------------------------


def _scope_chain(ctx: Context, node: ast.AST) -> list[Function]:
    """The functions around ``node``, innermost first (closures see their outer names)."""
    return [a for a in ctx.ancestors(node) if isinstance(a, FUNCTIONS)]


@per_node
def on_host(ctx: Context, loop: Loop) -> bool:
    """Whether a training loop provably runs on the host: the optimizer it steps is built,
    in the loop's function or one around it, on a model built there too, and nothing in
    the functions from the loop's out to that one moves anything to a device (CUDA used
    elsewhere in the file, for another model, does not count)."""
    chain = _scope_chain(ctx, loop)
    scopes: list[ast.AST] = [*chain, ctx.tree]
    params = set()
    for i, scope in enumerate(scopes):
        nodes = _nodes_of(ctx, scope)
        if i < len(chain):
            f = chain[i]
            params |= {a.arg for a in [*f.args.posonlyargs, *f.args.args, *f.args.kwonlyargs]}
        models = _optimized_models(ctx, nodes)
        if not models:
            continue
        scope_nodes = [n for s in scopes[: i + 1] for n in _nodes_of(ctx, s)]
        built = {
            t
            for n in scope_nodes
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
            for t in targets(n)
        }
        if any(_moves(ctx, n) for n in scope_nodes):
            return False
        return all(m in built and m not in params for m in models)
    return False


def _optimized_models(ctx: Context, nodes: list[ast.AST]) -> set[str]:
    """Root names of the models whose parameters an optimizer built among ``nodes`` gets."""
    models: set[str] = set()
    for n in nodes:
        if isinstance(n, ast.Call) and (ctx.qualname(n.func) or "").startswith("torch.optim."):
            for arg in n.args[:1]:
                for c in ast.walk(arg):
                    if isinstance(c, ast.Call) and method_name(c) in {
                        "parameters",
                        "named_parameters",
                    }:
                        name = root_name(c.func)
                        if name is not None:
                            models.add(name)
    return models


def _moves(ctx: Context, n: ast.AST) -> bool:
    """A move to a device, a factory given one, or a ``torch.cuda`` call."""
    if not isinstance(n, ast.Call):
        return False
    if method_name(n) in {"to", "cuda"} and device_of(ctx, n)[0]:
        return True
    kw = kwarg(n, "device")
    if kw is not None and not _is_cpu(kw.value):
        return True
    return (ctx.qualname(n.func) or "").startswith("torch.cuda.")


def _in_no_grad_callers(ctx: Context, func: Function) -> bool:
    """Whether every call of ``func`` by name in this file runs under ``no_grad`` (and there
    is at least one)."""
    calls = [
        c
        for c in ctx.by_type[ast.Call]
        if isinstance(c, ast.Call) and last_name(c.func) == func.name
    ]
    return bool(calls) and all(ctx.in_no_grad(c) for c in calls)


@per_node
def is_eval_loop(ctx: Context, loop: Loop) -> bool:
    """Whether ``loop`` evaluates batches: it trains nothing (no backward or step, itself or
    one helper down), does not walk a literal list (``for mask in [train, val, test]``: a
    few splits, not batches), and runs under ``no_grad``/``inference_mode`` (around it, on
    its function, around every call of its function), or runs its forward under one."""
    if ctx.loops.trains(loop):
        return False
    if isinstance(loop, ast.For | ast.AsyncFor) and isinstance(loop.iter, ast.List | ast.Tuple):
        return False
    if ctx.in_no_grad(loop):
        return True
    func = ctx.enclosing_function(loop)
    if func is not None and _in_no_grad_callers(ctx, func):
        return True
    return any(
        isinstance(n, ast.With) and any(ctx.is_no_grad(i.context_expr) for i in n.items)
        for n in iter_region(loop.body, conditional=True)
    )
