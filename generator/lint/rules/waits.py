"""What makes the host wait for the GPU, node by node: `.item()`, a copy to the host, a
Python number, condition or text made from a device tensor, an explicit synchronisation, a
helper of the file that reads `.item()`. No rules here."""

from __future__ import annotations

import ast

from generator.lint.analysis import Context
from generator.lint.rules.devices import (
    SCALARS,
    host_tensor,
    is_eval_loop,
    tensor_compare,
    tensor_value,
)
from generator.lint.rules.steps import TENSOR_TESTS
from generator.lint.syntax import iter_region, method_name, receiver, root_name
from generator.lint.training import Function

_SYNCHRONIZE = {"torch.cuda.synchronize", "torch.accelerator.synchronize"}
_MATH = {"isnan", "isinf", "isfinite", "floor", "ceil", "trunc", "sqrt", "exp", "log", "fabs"}
_TEXT = {"str", "repr", "format"}


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
        if isinstance(test.func, ast.Name) and test.func.id in SCALARS and len(test.args) == 1:
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
        return tensor_compare(ctx, test, names)
    return isinstance(test, ast.Name) and test.id in names


def scalar(ctx: Context, node: ast.Call, names: frozenset[str]) -> bool:
    """``float(x)``, ``int(pred[i])``, ``bool(x)``, ``math.isnan(x)`` of a device tensor."""
    if len(node.args) != 1:
        return False
    func = node.func
    if isinstance(func, ast.Name) and func.id in SCALARS and func.id not in ctx.functions:
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


def helper_item(ctx: Context, func: Function, depth: int = 2) -> ast.Call | None:
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
                found = helper_item(ctx, inner, depth - 1)
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
    if scalar(ctx, node, names):
        return "PTT022", None
    if _printed(ctx, node, names) or _formatted(ctx, node, names):
        return "PTT023", None
    return None


def statement_of(ctx: Context, node: ast.AST) -> ast.stmt | None:
    current: ast.AST | None = node
    while current is not None and not isinstance(current, ast.stmt):
        current = ctx.parent(current)
    return current
