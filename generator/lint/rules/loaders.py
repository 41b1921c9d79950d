"""What the data-loading rules need to know about a `DataLoader` call: the options it is
given (``**kwargs`` dicts built from literals followed), the names it ends up bound to
(through one function of this file that returns it), and whether the batches it gives
reach a device on every step. No rules here."""

from __future__ import annotations

import ast

from generator.lint.analysis import Context
from generator.lint.rules.devices import on_host
from generator.lint.syntax import LOOPS, iter_region, kwarg, method_name, receiver
from generator.lint.training import Loop, per_node

DATALOADER = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")

_IN_MEMORY = {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}
_LISTS = (ast.List, ast.ListComp, ast.Tuple)


def _dataset_values(ctx: Context, call: ast.Call) -> list[ast.AST]:
    """What a ``DataLoader`` loads: its dataset argument, or the values assigned to it."""
    dataset = call.args[0] if call.args else getattr(kwarg(call, "dataset"), "value", None)
    if isinstance(dataset, ast.Name):
        return list(ctx.assignments.get(dataset.id, ()))
    return [] if dataset is None else [dataset]


def dataset_in_memory(ctx: Context, call: ast.Call) -> bool:
    """A `TensorDataset`, or a Python list of samples: no per-item loading to parallelise."""
    values = _dataset_values(ctx, call)
    return bool(values) and all(
        isinstance(v, _LISTS) or (isinstance(v, ast.Call) and ctx.qualname(v.func) in _IN_MEMORY)
        for v in values
    )


def dataset_on_device(ctx: Context, call: ast.Call) -> bool:
    """A `TensorDataset` of tensors made on (or moved to) a device: nothing left to pin."""
    values = _dataset_values(ctx, call)
    return bool(values) and all(
        isinstance(v, ast.Call)
        and ctx.qualname(v.func) in _IN_MEMORY
        and any(
            isinstance(n, ast.keyword)
            and n.arg == "device"
            or (isinstance(n, ast.Call) and method_name(n) in {"to", "cuda"})
            for n in ast.walk(v)
        )
        for v in values
    )


def _scope_of(ctx: Context, node: ast.AST) -> list[ast.stmt]:
    return ctx.scope_body(node)


def _dict_keys(
    ctx: Context, value: ast.AST, scope: list[ast.stmt], depth: int = 0
) -> set[str] | None:
    """The keys of a dict built from literals: ``{"num_workers": 4}``, ``dict(pin_memory=True)``,
    or a name bound to one in ``scope``; None when they cannot be read."""
    if isinstance(value, ast.Dict):
        keys: set[str] = set()
        for k, v in zip(value.keys, value.values, strict=False):
            if k is None:  # {**other}
                inner = _dict_keys(ctx, v, scope, depth + 1)
                if inner is None:
                    return None
                keys |= inner
            elif isinstance(k, ast.Constant) and isinstance(k.value, str):
                keys.add(k.value)
            else:
                return None
        return keys
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
        if value.args or any(k.arg is None for k in value.keywords):
            return None
        return {k.arg for k in value.keywords if k.arg is not None}
    if isinstance(value, ast.Name) and depth < 3:
        return name_keys(ctx, value.id, scope, depth + 1)
    return None


def name_keys(ctx: Context, name: str, scope: list[ast.stmt], depth: int = 0) -> set[str] | None:
    """The keys a dict named ``name`` may hold in ``scope``: its literal assignments, and the
    ``name.update(...)`` calls and ``name[key] = ...`` stores that add to it (conditional
    ones included); None when any of them cannot be read."""
    keys: set[str] = set()
    found = False
    for node in iter_region(scope, conditional=True):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    inner = _dict_keys(ctx, node.value, scope, depth)
                    if inner is None:
                        return None
                    keys |= inner
                    found = True
                elif (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == name
                ):
                    if not (
                        isinstance(target.slice, ast.Constant)
                        and isinstance(target.slice.value, str)
                    ):
                        return None
                    keys.add(target.slice.value)
        elif (
            isinstance(node, ast.Call)
            and method_name(node) == "update"
            and isinstance(recv := receiver(node), ast.Name)
            and recv.id == name
        ):
            for arg in node.args:
                inner = _dict_keys(ctx, arg, scope, depth)
                if inner is None:
                    return None
                keys |= inner
            keys |= {k.arg for k in node.keywords if k.arg is not None}
    return keys if found else None


def options(ctx: Context, call: ast.Call) -> set[str] | None:
    """The keyword options ``call`` is given, with ``**kwargs`` dicts of this function read
    (``DataLoader(ds, **loader_args)``); None when one cannot be read."""
    out = {k.arg for k in call.keywords if k.arg is not None}
    for kw in call.keywords:
        if kw.arg is None:
            inner = _dict_keys(ctx, kw.value, _scope_of(ctx, call))
            if inner is None:
                return None
            out |= inner
    return out


def _returned_by(
    ctx: Context, call: ast.Call
) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, int | None] | None:
    """The function of this file that returns ``call``'s result (directly, through one name,
    or as element ``i`` of a returned tuple), with that position."""
    func = ctx.enclosing_function(call)
    if func is None:
        return None
    bound = {t.id for t in _assigned_names(ctx, call)}
    for node in iter_region(func.body, conditional=True):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        for i, v in enumerate(values):
            if v is call or (isinstance(v, ast.Name) and v.id in bound):
                return func, (i if isinstance(node.value, ast.Tuple) else None)
    return None


def _assigned_names(ctx: Context, value: ast.AST) -> list[ast.Name]:
    holder = ctx.parent(value)
    if isinstance(holder, ast.Assign):
        return [t for t in holder.targets if isinstance(t, ast.Name)]
    return []


@per_node
def names(ctx: Context, call: ast.Call) -> frozenset[str]:
    """Names the loader of ``call`` is bound to: where it is built, and where a function of
    this file that returns it is called (``train_loader, val_loader = build_loaders()``)."""
    out = {t.id for t in _assigned_names(ctx, call)}
    returned = _returned_by(ctx, call)
    if returned is not None:
        func, index = returned
        for use in ctx.by_type[ast.Call]:
            assert isinstance(use, ast.Call)
            if not (isinstance(use.func, ast.Name) and use.func.id == func.name):
                continue
            holder = ctx.parent(use)
            if not isinstance(holder, ast.Assign):
                continue
            for target in holder.targets:
                if index is None and isinstance(target, ast.Name):
                    out.add(target.id)
                elif (
                    index is not None and isinstance(target, ast.Tuple) and index < len(target.elts)
                ):
                    elt = target.elts[index]
                    if isinstance(elt, ast.Name):
                        out.add(elt.id)
    return frozenset(out)


def _every_step(ctx: Context, loop: Loop, node: ast.AST) -> bool:
    return any(n is node and every for n, every in ctx.flow.every_step(loop, set()))


def feeds_device_steps(ctx: Context, call: ast.Call) -> bool:
    """Whether the batches of ``call``'s loader may reach a device on every step: False only
    when each use of its names is known and none does (iterated by a loop that runs on the
    host, or read inside a training loop on some steps only: a sample grid every 100
    batches)."""
    bound = names(ctx, call)
    if not bound:
        return True
    training = set(ctx.loops.training_loops)
    for node in ctx.by_type[ast.Name]:
        assert isinstance(node, ast.Name)
        if node.id not in bound or not isinstance(node.ctx, ast.Load):
            continue
        holder = ctx.parent(node)
        if isinstance(holder, ast.Tuple):
            holder = ctx.parent(holder)
        if isinstance(holder, ast.Return):
            continue  # handed back by the function that builds it: its callers' names count
        loops = [a for a in ctx.ancestors(node) if isinstance(a, LOOPS) and a in training]
        iterated = next(
            (
                a
                for a in ctx.ancestors(node)
                if isinstance(a, ast.For | ast.AsyncFor) and _within(node, a.iter)
            ),
            None,
        )
        if iterated is not None and iterated in training:
            if not on_host(ctx, iterated):
                return True
            continue
        if loops and not _every_step(ctx, loops[0], node):
            continue  # read inside a training loop, on some steps only
        if loops and on_host(ctx, loops[0]):
            continue
        return True
    return False


def _within(node: ast.AST, tree: ast.AST) -> bool:
    return any(n is node for n in ast.walk(tree))
