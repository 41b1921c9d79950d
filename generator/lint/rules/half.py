"""What PTT044 (`generator.lint.rules.amp.HalfModelTraining`) leaves alone: a module cast to
half precision only for inference (frozen, or in eval mode with no optimizer), cast straight
back to float32, or one without weights (a loss)."""

from __future__ import annotations

import ast
import re

from generator.lint.analysis import Context
from generator.lint.syntax import dotted, is_const, method_name, receiver


def loss_module(ctx: Context, recv: ast.AST | None) -> bool:
    """A loss function (``criterion = nn.CrossEntropyLoss()``): it has no weights."""
    name = dotted(recv) if recv is not None else None
    if name is None:
        return False
    if re.search(r"criterion|loss", name.rsplit(".", 1)[-1], re.I):
        return True
    return isinstance(recv, ast.Name) and any(
        (q := ctx.qualname(v.func) or "").startswith("torch.nn.") and q.endswith("Loss")
        for v in ctx.assignments.get(recv.id, ())
        if isinstance(v, ast.Call)
    )


def round_trip(ctx: Context, call: ast.Call) -> bool:
    """``model.half().float()``: cast back to float32 straight away."""
    parent = ctx.parent(call)
    outer = ctx.parent(parent) if isinstance(parent, ast.Attribute) else None
    if not (isinstance(parent, ast.Attribute) and isinstance(outer, ast.Call)):
        return False
    if parent.attr == "float":
        return True
    return parent.attr == "to" and any(
        ctx.qualname(a) in {"torch.float32", "torch.float"}
        for a in [*outer.args, *(k.value for k in outer.keywords)]
    )


def frozen_names(ctx: Context) -> set[str]:
    """Modules frozen for inference: ``x.requires_grad_(False)``, ``p.requires_grad =
    False`` over ``x.parameters()``, or ``x.eval()`` where ``x.parameters()`` is never
    taken (so no optimizer trains it)."""
    out: set[str] = set()
    trained = {dotted(receiver(c)) for c in ctx.methods("parameters", "named_parameters")}
    for call in ctx.methods("requires_grad_", "eval", "train"):
        name = method_name(call)
        flag = call.args[0] if call.args else None
        text = dotted(receiver(call))
        if text and (
            (name == "requires_grad_" and is_const(flag, False))
            # evaluation mode, and its parameters go to no optimizer: inference only
            or (name == "eval" and not call.args and text not in trained)
            or (name == "train" and is_const(flag, False) and text not in trained)
        ):
            out.add(text)
    for loop in ctx.by_type[ast.For]:
        assert isinstance(loop, ast.For)
        if (
            isinstance(loop.iter, ast.Call)
            and method_name(loop.iter) == "parameters"
            and any(
                isinstance(n, ast.Assign)
                and any(
                    isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in n.targets
                )
                and is_const(n.value, False)
                for n in ast.walk(loop)
            )
        ):
            text = dotted(receiver(loop.iter))
            if text:
                out.add(text)
    return out


def frozen(recv: ast.AST | None, names: set[str]) -> bool:
    """Whether ``recv`` is one of the modules `frozen_names` found."""
    return recv is not None and dotted(recv) in names
