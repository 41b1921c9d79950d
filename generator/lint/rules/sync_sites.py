"""Where a training step (or an evaluation batch) waits for the GPU, found once per file for
the sync rules (`.sync`, PTT036 of `.loop`). No rules here.

Each *site* is a node that makes the host wait (``.item()``, a copy to the host, a Python
number or condition made from a device tensor, formatting one, an explicit synchronisation,
a helper of this file that reads ``.item()``), the rule it belongs to and the statement
that holds it. A statement is reported once, by the most specific rule (`PRIORITY`: the
``.item()`` of ``x.cpu().item()`` is PTT020's, not PTT021's); a block of consecutive
statements that each wait is reported once, at its first statement (after the first wait
the GPU is idle, so the others cost nothing more). Loops whose model lives on the host (a
CPU baseline in a file that trains elsewhere on CUDA) have no sites.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field

from generator.lint.analysis import Context
from generator.lint.rules.steps import METADATA, TENSOR_TESTS, outputs
from generator.lint.rules.tensors import device_of
from generator.lint.syntax import (
    FUNCTIONS,
    LOOPS,
    SCOPES,
    iter_region,
    kwarg,
    last_name,
    method_name,
    receiver,
    root_name,
)
from generator.lint.training import Function, Loop, per_node

#: When one statement holds several waits, the rule that reports it.
PRIORITY = ("PTT052", "PTT024", "PTT020", "PTT022", "PTT021", "PTT023", "PTT036")
_SYNCHRONIZE = {"torch.cuda.synchronize", "torch.accelerator.synchronize"}
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
_TO_HOST = {"item", "tolist", "numpy", "cpu"}
_SCALARS = {"float", "int", "bool"}
_MATH = {"isnan", "isinf", "isfinite", "floor", "ceil", "trunc", "sqrt", "exp", "log", "fabs"}
_TEXT = {"str", "repr", "format"}


@dataclass
class Site:
    """One wait for the GPU: ``rule`` reports it at ``node``; ``stmt`` holds it."""

    rule: str
    node: ast.AST
    stmt: ast.stmt
    variant: str | None = None
    args: dict[str, str] = field(default_factory=dict)


_CACHE: weakref.WeakKeyDictionary[Context, dict[str, list[Site]]] = weakref.WeakKeyDictionary()


def sites(ctx: Context, rule: str) -> list[Site]:
    """The sites ``rule`` reports in ``ctx``, in source order."""
    found = _CACHE.get(ctx)
    if found is None:
        found = _CACHE[ctx] = _all_sites(ctx)
    return found.get(rule, [])


# --- what holds a device tensor ------------------------------------------------------------


def _scope_assigns(ctx: Context, node: ast.AST) -> list[ast.Assign]:
    return [
        n for n in iter_region(ctx.scope_body(node), conditional=True) if isinstance(n, ast.Assign)
    ]


def _targets(node: ast.Assign) -> set[str]:
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
def _device_names(ctx: Context, loop: Loop) -> frozenset[str]:
    names = set(ctx.loops.loss_names(loop)) | outputs(ctx, loop)
    assigns = _scope_assigns(ctx, loop)
    assigns += [n for n in ctx.loops.all_nodes(loop) if isinstance(n, ast.Assign)]
    for node in assigns:
        if _on_device(ctx, node.value):
            names |= _targets(node)
    for _ in range(3):
        before = len(names)
        for node in assigns:
            if _carries(ctx, node, names):
                names |= _targets(node)
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
    return set(_device_names(ctx, loop))


def host_value(ctx: Context, value: ast.AST) -> bool:
    """Whether a value has left the device (or never was a tensor): ``x.item()``,
    ``float(x)``, ``np.mean(...)``, ``len(x)``, a formatted string."""
    if isinstance(value, ast.BinOp):
        return all(
            isinstance(t, ast.Constant) or host_value(ctx, t) for t in (value.left, value.right)
        ) or any(host_value(ctx, t) for t in (value.left, value.right) if not isinstance(t, ast.Name))
    if isinstance(value, ast.Call):
        if method_name(value) in _TO_HOST:
            return True
        if isinstance(value.func, ast.Name) and value.func.id in _SCALARS | {"len", "str"}:
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
        return _tensor_compare(ctx, node, names)
    if isinstance(node, ast.Call):
        method = method_name(node)
        if method is not None:
            if method in _TO_HOST or method in METADATA:
                return False
            q = ctx.qualname(node.func) or ""
            if not q.startswith("torch."):
                return tensor_value(ctx, receiver(node), names)
        q = ctx.qualname(node.func) or ""
        if q.startswith("torch.") and q not in HOST_FACTORIES:
            return any(tensor_value(ctx, a, names) for a in node.args)
    return False


def _tensor_compare(ctx: Context, node: ast.Compare, names: set[str] | frozenset[str]) -> bool:
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
    bodies: list[list[ast.stmt]] = [*(f.body for f in chain), ctx.tree.body]
    params = set()
    for i, body in enumerate(bodies):
        nodes = list(iter_region(body, conditional=True))
        if i < len(chain):
            f = chain[i]
            params |= {a.arg for a in [*f.args.posonlyargs, *f.args.args, *f.args.kwonlyargs]}
        models = _optimized_models(ctx, nodes)
        if not models:
            continue
        scope_nodes = [n for b in bodies[: i + 1] for n in iter_region(b, conditional=True)]
        built = {
            t for n in scope_nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
            for t in _targets(n)
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
                    if isinstance(c, ast.Call) and method_name(c) in {"parameters", "named_parameters"}:
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
    """Whether ``loop`` evaluates: it trains nothing (no backward or step, itself or one
    helper down), and runs under ``no_grad``/``inference_mode`` (around it, on its
    function, around every call of its function), or runs its forward under one."""
    if ctx.loops.trains(loop):
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


# --- what waits, node by node ---------------------------------------------------------------


def _formatted(ctx: Context, node: ast.AST, names: frozenset[str]) -> bool:
    """Whether ``node`` formats a device tensor into text: an f-string field, ``%`` on a
    string, ``"...".format(...)``, ``str()``/``repr()`` of one."""
    if isinstance(node, ast.JoinedStr):
        return any(
            isinstance(v, ast.FormattedValue) and tensor_value(ctx, v.value, names)
            for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_text(node.left):
        values = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        return any(tensor_value(ctx, v, names) for v in values)
    if isinstance(node, ast.Call):
        func = node.func
        args = [*node.args, *(k.value for k in node.keywords)]
        if isinstance(func, ast.Name) and func.id in _TEXT and func.id not in ctx.functions:
            return any(tensor_value(ctx, a, names) for a in args)
        if method_name(node) == "format" and _is_text(receiver(node)):
            return any(tensor_value(ctx, a, names) for a in args)
    return False


def _is_text(node: ast.AST | None) -> bool:
    """A string literal, or an expression built from them (``"%10s" * 2 + "%g"``)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mult):
        return _is_text(node.left) or _is_text(node.right)
    return isinstance(node, ast.JoinedStr)


def on_tensor(ctx: Context, test: ast.AST, names: frozenset[str]) -> bool:
    """Whether a Python condition reads a device tensor's value."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return on_tensor(ctx, test.operand, names)
    if isinstance(test, ast.BoolOp):
        return any(on_tensor(ctx, v, names) for v in test.values)
    if isinstance(test, ast.Call):
        if isinstance(test.func, ast.Name) and test.func.id in _SCALARS and len(test.args) == 1:
            return on_tensor(ctx, test.args[0], names)  # if bool(loss == 0):
        if ctx.qualname(test.func) in TENSOR_TESTS:
            return True
        if method_name(test) in {"any", "all"}:
            return tensor_value(ctx, receiver(test), names) or any(
                isinstance(n, ast.Call) and ctx.qualname(n.func) in TENSOR_TESTS
                for n in ast.walk(test)
            )
        return False
    if isinstance(test, ast.Compare):
        return _tensor_compare(ctx, test, names)
    return isinstance(test, ast.Name) and test.id in names


def _scalar(ctx: Context, node: ast.Call, names: frozenset[str]) -> bool:
    """``float(x)``, ``int(pred[i])``, ``bool(x)``, ``math.isnan(x)`` of a device tensor."""
    if len(node.args) != 1:
        return False
    func = node.func
    if isinstance(func, ast.Name) and func.id in _SCALARS and func.id not in ctx.functions:
        return tensor_value(ctx, node.args[0], names)
    q = ctx.qualname(func) or ""
    return q.startswith("math.") and q[5:] in _MATH and tensor_value(ctx, node.args[0], names)


def _printed(ctx: Context, node: ast.Call, names: frozenset[str]) -> bool:
    if not (isinstance(node.func, ast.Name) and node.func.id == "print"):
        return False
    return any(tensor_value(ctx, a, names) for a in node.args)


def reads_item(ctx: Context, node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and method_name(node) == "item"
        and not node.args
        and not host_tensor(ctx, receiver(node))
    )


def _phase(ctx: Context, func: Function) -> bool:
    """Whether ``func`` runs a whole phase (an epoch, an evaluation): it holds a loop that
    trains or evaluates."""
    return any(
        isinstance(n, ast.For | ast.While) and (ctx.loops.trains(n) or is_eval_loop(ctx, n))
        for n in iter_region(func.body, conditional=True)
    )


def _helper_item(ctx: Context, func: Function, depth: int = 2) -> ast.Call | None:
    """The first ``.item()`` that ``func`` (a function of this file, not a whole phase) runs
    every time it is called, itself or through the helpers it calls (``depth`` levels)."""
    if _phase(ctx, func):
        return None
    for node in iter_region(func.body):
        if reads_item(ctx, node):
            assert isinstance(node, ast.Call)
            return node
        if depth > 1 and isinstance(node, ast.Call):
            inner = ctx.loops.helper_of(node)
            if inner is not None and inner is not func:
                found = _helper_item(ctx, inner, depth - 1)
                if found is not None:
                    return found
    return None


def classify(ctx: Context, node: ast.AST, names: frozenset[str]) -> tuple[str, str | None] | None:
    """The rule (and message variant) for a node that waits for the GPU, or None."""
    if isinstance(node, ast.If | ast.While | ast.Assert | ast.IfExp):
        return ("PTT024", None) if on_tensor(ctx, node.test, names) else None
    if isinstance(node, ast.JoinedStr | ast.BinOp):
        return ("PTT023", None) if _formatted(ctx, node, names) else None
    if not isinstance(node, ast.Call):
        return None
    q = ctx.qualname(node.func) or ""
    if q in _SYNCHRONIZE or (
        method_name(node) == "synchronize"
        and isinstance(recv := receiver(node), ast.Call)
        and ctx.qualname(recv.func) == "torch.cuda.current_stream"
    ):
        return "PTT052", None
    if reads_item(ctx, node):
        return "PTT020", None
    method = method_name(node)
    if method in {"cpu", "tolist", "numpy"} and not node.args:
        return ("PTT021", None) if root_name(receiver(node)) in names else None
    if _scalar(ctx, node, names):
        return "PTT022", None
    if _printed(ctx, node, names) or _formatted(ctx, node, names):
        return "PTT023", None
    return None


def statement_of(ctx: Context, node: ast.AST) -> ast.stmt | None:
    current: ast.AST | None = node
    while current is not None and not isinstance(current, ast.stmt):
        current = ctx.parent(current)
    return current


# --- the sites of a file ---------------------------------------------------------------------


def _nested_loop(ctx: Context, node: ast.AST, outer: Loop) -> bool:
    """Whether ``node`` sits in a loop nested in ``outer`` (a per-sample loop of a step)."""
    for anc in ctx.ancestors(node):
        if anc is outer or isinstance(anc, SCOPES):
            return False
        if isinstance(anc, LOOPS):
            return True
    return False


def _branch(ctx: Context, node: ast.AST, if_node: ast.If) -> str | None:
    """``"body"`` or ``"orelse"``: the branch of ``if_node`` that holds ``node``."""
    child: ast.AST = node
    for anc in ctx.ancestors(node):
        if anc is if_node:
            if child in if_node.body:
                return "body"
            return "orelse" if child in if_node.orelse else None
        child = anc
    return None


def _loop_sites(ctx: Context, loop: Loop) -> Iterator[Site]:
    names = _device_names(ctx, loop)
    found: dict[ast.AST, tuple[bool, str, str | None, dict[str, str]]] = {}
    ifs: list[ast.If] = []
    for node, every in ctx.flow.every_step(
        loop, set(names), skip=lambda s: s is not loop and is_eval_loop(ctx, s)
    ):
        if node in found:
            if every:
                found[node] = (True, *found[node][1:])
            continue
        if isinstance(node, ast.If) and every and node.orelse:
            ifs.append(node)
        kind = classify(ctx, node, names)
        args: dict[str, str] = {}
        if kind is None and isinstance(node, ast.Call):
            helper = ctx.loops.helper_of(node)
            item = _helper_item(ctx, helper) if helper is not None else None
            if helper is not None and item is not None:
                kind = ("PTT020", "helper")
                args = {"helper": helper.name, "line": str(item.lineno)}
        if kind is not None:
            found[node] = (every, kind[0], kind[1], args)
    # an if/else whose two branches both wait runs one of those waits on every step
    for if_node in ifs:
        branches: dict[str, list[ast.AST]] = {"body": [], "orelse": []}
        for node, (every, *_) in found.items():
            if not every and (which := _branch(ctx, node, if_node)) is not None:
                branches[which].append(node)
        if branches["body"] and branches["orelse"]:
            for node in branches["body"] + branches["orelse"]:
                found[node] = (True, *found[node][1:])
    sites: list[Site] = []
    for node, (every, rule, variant, args) in found.items():
        stmt = statement_of(ctx, node)
        if not every or stmt is None:
            continue
        if rule == "PTT022" and _nested_loop(ctx, node, loop):
            variant = "sample"
        sites.append(Site(rule, node, stmt, variant, args))
    synced = [getattr(s.node, "lineno", 0) for s in sites if s.rule == "PTT052"]
    for site in sites:
        line = getattr(site.node, "lineno", 0)
        if site.rule != "PTT052" and any(s < line for s in synced):
            continue  # the step already waited for the GPU: these reads are free
        yield site


def _step_function_sites(ctx: Context) -> Iterator[Site]:
    """``.item()`` in a step function that nothing in this file calls by name (a closure
    handed to a trainer, ``perform_train_step_fn``): it runs once per step."""
    called = {last_name(c.func) for c in ctx.by_type[ast.Call] if isinstance(c, ast.Call)}
    for func in ctx.functions.values():
        if func.name in called or "step" not in func.name.lower():
            continue
        if not ctx.loops.helper_trains(func):
            continue
        for node in iter_region(func.body):
            if reads_item(ctx, node) and (stmt := statement_of(ctx, node)) is not None:
                yield Site("PTT020", node, stmt)


def _numeric_start(ctx: Context, scope: list[ast.stmt], name: str) -> bool:
    """Whether ``name`` starts as a number in ``scope`` (``total = 0``, ``a, b = 0, 0.0``)."""
    for node in iter_region(scope, conditional=True):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id == name:
                return isinstance(node.value, ast.Constant) and isinstance(
                    node.value.value, int | float
                )
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                for t, v in zip(target.elts, node.value.elts, strict=False):
                    if isinstance(t, ast.Name) and t.id == name:
                        return isinstance(v, ast.Constant) and isinstance(v.value, int | float)
    return False


def _terms(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div):
        return [*_terms(node.left), *_terms(node.right)]
    return [node]


def _copied(ctx: Context, term: ast.AST, names: frozenset[str]) -> bool:
    """A tensor copied to the host: ``x.cpu().numpy()``, ``x.tolist()``, ``float(x)``."""
    if not isinstance(term, ast.Call):
        return False
    if method_name(term) in {"numpy", "tolist", "cpu"}:
        inner = receiver(term)
        if isinstance(inner, ast.Call) and method_name(inner) == "cpu":
            return True  # `x.cpu().numpy()`: a tensor copied, whatever x is called
        return root_name(inner) in names or tensor_value(ctx, inner, names)
    return _scalar(ctx, term, names)


def _number_read(ctx: Context, value: ast.AST, names: frozenset[str]) -> bool:
    """A number read from the GPU: ``x.item()``, ``float(x)``, arithmetic on one, or one in
    a NumPy array (``np.array([loss.item() * n])``)."""
    if isinstance(value, ast.Call) and (ctx.qualname(value.func) or "").startswith("numpy."):
        elts = [e for a in value.args for e in (a.elts if isinstance(a, ast.List | ast.Tuple) else [a])]
        return any(_number_read(ctx, e, names) for e in elts)
    return any(
        reads_item(ctx, t) or (isinstance(t, ast.Call) and _scalar(ctx, t, names))
        for t in _terms(value)
    )


def _accumulated(node: ast.AST) -> tuple[list[ast.AST], str | None] | None:
    """The values a statement accumulates and the accumulator: ``x += v``, ``x = x + v``,
    ``meter.update(v, n)``, ``values.append(v)``, ``d[k] = v``."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
        return [node.value], root_name(node.target)
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Subscript):
            return [node.value], None
        if (
            isinstance(target, ast.Name)
            and isinstance(node.value, ast.BinOp)
            and isinstance(node.value.op, ast.Add)
            and any(isinstance(t, ast.Name) and t.id == target.id for t in _terms(node.value))
        ):
            return [node.value], target.id
    if isinstance(node, ast.Call) and method_name(node) in {"update", "append"}:
        values = [*node.args[:1], *(k.value for k in node.keywords if k.arg not in {"n", None})]
        return (values, None) if values else None
    return None


def _eval_sites(ctx: Context, loop: Loop) -> Iterator[Site]:
    """Metrics summed on the host on every batch of an evaluation loop (PTT036), and Python
    numbers made from tensor elements per sample (PTT022)."""
    names = _device_names(ctx, loop)
    scope = ctx.scope_body(loop)
    region = [n for n, every in ctx.flow.every_step(loop, set(names)) if every]
    synced = [n.lineno for n in region if isinstance(n, ast.Call) and classify(ctx, n, names) == ("PTT052", None)]
    read: set[str] = set()  # names bound to a number read from the GPU in this iteration
    for node in iter_region(loop.body, conditional=True):
        if isinstance(node, ast.Assign) and _number_read(ctx, node.value, names):
            read |= _targets(node)
    for node in region:
        if any(s < getattr(node, "lineno", 0) for s in synced):
            continue  # an explicit synchronize already waited in this batch
        if isinstance(node, ast.Call) and _scalar(ctx, node, names) and _nested_loop(ctx, node, loop):
            if (stmt := statement_of(ctx, node)) is not None:
                yield Site("PTT022", node, stmt, "sample")
            continue
        acc = _accumulated(node)
        if acc is None:
            continue
        values, accumulator = acc
        stmt = statement_of(ctx, node)
        if stmt is None:
            continue
        terms = [t for v in values for t in _terms(v)]
        direct = [t for t in terms if reads_item(ctx, t)]
        numeric = accumulator is not None and _numeric_start(ctx, scope, accumulator)
        if not direct and numeric:
            direct = [t for t in terms if _copied(ctx, t, names)]
        if direct:
            yield Site("PTT036", direct[0], stmt)
        elif not isinstance(node, ast.Assign) or accumulator is not None:
            if any(isinstance(t, ast.Name) and t.id in read for v in values for t in _terms(v)):
                yield Site("PTT036", stmt, stmt)  # `v = x.item()`, then `total += v`


Path = list[tuple[list[ast.stmt], int]]


def _path(ctx: Context, stmt: ast.stmt) -> Path:
    """The blocks (statement lists) that hold ``stmt``, outermost first, up to the loop or
    function around it, with its index (or its container's) in each."""
    out: Path = []
    node: ast.AST = stmt
    while (parent := ctx.parent(node)) is not None:
        block = next(
            (
                b
                for name in ("body", "orelse", "finalbody")
                if isinstance(b := getattr(parent, name, None), list) and node in b
            ),
            None,
        )
        if block is None:
            break
        out.append((block, block.index(node)))  # type: ignore[arg-type]
        if isinstance(parent, (*LOOPS, *SCOPES, ast.ExceptHandler)):
            break
        node = parent
    return list(reversed(out))


def _trivial(stmts: list[ast.stmt]) -> bool:
    """Statements that launch no GPU work: no call at all (``n += 1``, ``x = a / b``)."""
    return not any(isinstance(n, ast.Call) for s in stmts for n in ast.walk(s))


def _quiet_between(first: Path, second: Path) -> bool:
    """Whether nothing but trivial statements runs between two sites, given their paths."""
    k = 0
    while (
        k < len(first)
        and k < len(second)
        and first[k][0] is second[k][0]
        and first[k][1] == second[k][1]
    ):
        k += 1
    if k == len(first) and k <= len(second):  # the second sits inside the first's statement
        return all(_trivial(block[:i]) for block, i in second[k:])
    if k == len(first) or k == len(second) or first[k][0] is not second[k][0]:
        return False  # different branches, or different loops
    block, a = first[k]
    b = second[k][1]
    if a > b or not _trivial(block[a + 1 : b]):
        return False
    after_first = all(_trivial(blk[i + 1 :]) for blk, i in first[k + 1 :])
    before_second = all(_trivial(blk[:i]) for blk, i in second[k + 1 :])
    headers = [blk[i] for blk, i in second[k : len(second) - 1]]
    tests_quiet = all(
        not isinstance(h, ast.If | ast.While) or _trivial([ast.Expr(h.test)]) for h in headers
    )
    return after_first and before_second and tests_quiet


def _fold(ctx: Context, chosen: list[Site]) -> list[Site]:
    """Keep the first site of each run of waits with nothing but trivial statements between
    them (a logging block): after the first wait the GPU is idle, the others are free."""
    ordered = sorted(chosen, key=lambda s: (s.stmt.lineno, s.stmt.col_offset))
    out: list[Site] = []
    previous: Path | None = None
    for site in ordered:
        path = _path(ctx, site.stmt)
        if previous is not None and _quiet_between(previous, path):
            previous = path
            continue
        out.append(site)
        previous = path
    return out


def _all_sites(ctx: Context) -> dict[str, list[Site]]:
    per_stmt: dict[ast.stmt, list[Site]] = {}

    def add(site: Site) -> None:
        per_stmt.setdefault(site.stmt, []).append(site)

    for loop in ctx.loops.training_loops:
        if not on_host(ctx, loop):
            for site in _loop_sites(ctx, loop):
                add(site)
    for site in _step_function_sites(ctx):
        add(site)
    training = set(ctx.loops.training_loops)
    for kind in (ast.For, ast.While):
        for loop in ctx.by_type[kind]:
            assert isinstance(loop, ast.For | ast.While)
            if loop not in training and is_eval_loop(ctx, loop):
                for site in _eval_sites(ctx, loop):
                    add(site)
    rank = {rule: i for i, rule in enumerate(PRIORITY)}
    chosen = [
        min(found, key=lambda s: (rank[s.rule], getattr(s.node, "lineno", 0), getattr(s.node, "col_offset", 0)))
        for found in per_stmt.values()
    ]
    out: dict[str, list[Site]] = {}
    for site in sorted(_fold(ctx, chosen), key=lambda s: (s.stmt.lineno, s.stmt.col_offset)):
        out.setdefault(site.rule, []).append(site)
    return out
