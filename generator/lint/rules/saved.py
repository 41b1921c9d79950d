"""What ``torch.save`` writes: the values saved (through one variable and one helper of the
file), and those that ``torch.load(weights_only=True)`` refuses. No rules here."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from generator.lint.analysis import Context
from generator.lint.rules.devices import scope_nodes
from generator.lint.syntax import last_name, method_name

SAVE = ("torch.save", "torch.serialization.save")
#: Functions that return their module argument, a copy of it or the module it wraps.
UNWRAP = {"deepcopy", "de_parallel", "unwrap_model", "unwrap"}
#: Methods that return the module they are called on (or a copy): still a whole module.
MODULE_CHAIN = {"half", "float", "bfloat16", "double", "to", "cpu", "cuda", "eval", "train"}
_OPTIMIZER = re.compile(r"optim", re.I)
_SCHEDULER = re.compile(r"sched", re.I)
#: What each kind of object is rebuilt from: the variants of PTT056.
_KINDS = ("namespace", "optimizer", "scheduler", "scaler", "numpy", "path")


def saved_values(ctx: Context) -> list[tuple[ast.AST, ast.AST]]:
    """(where to report, what is saved) for each ``torch.save``, and for each call of a helper
    of this file that saves one of its parameters (``save_checkpoint(state, path)``): the
    argument passed for that parameter. A saved parameter stays a name (`expand` does not
    follow it to assignments elsewhere)."""
    out: list[tuple[ast.AST, ast.AST]] = []
    helpers: dict[str, int] = {}
    for call in ctx.calls(*SAVE):
        if not call.args:
            continue
        func = ctx.enclosing_function(call)
        obj = call.args[0]
        if func is not None and isinstance(obj, ast.Name):
            params = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
            if obj.id in params:  # a helper that saves what it is given: see its callers too
                helpers[func.name] = params.index(obj.id) - (params[:1] == ["self"])
                obj = ast.Name(id=obj.id, ctx=ast.Load())  # a parameter: not to be expanded
        out.append((call, obj))
    for name, index in helpers.items():
        for use in ctx.by_type[ast.Call]:
            assert isinstance(use, ast.Call)
            if last_name(use.func) == name and 0 <= index < len(use.args):
                out.append((use, use.args[index]))
    return out


def scoped_values(ctx: Context, name: ast.Name) -> list[ast.AST]:
    """The values assigned to ``name`` in the function (or module) where it is used; for a
    parameter of that function, the values the file assigns to that name anywhere (what its
    callers pass is usually bound under the same name: ``main(args)``)."""
    func = ctx.enclosing_function(name)
    if func is not None and name.id in {
        a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
    }:
        return list(ctx.assignments.get(name.id, []))
    out: list[ast.AST] = []
    for node in scope_nodes(ctx, name):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name.id for t in node.targets
        ):
            out.append(node.value)
    return out


def expand(ctx: Context, value: ast.AST) -> list[ast.AST]:
    """``value``, and the values assigned to it in its function when it is a name (one
    variable followed; a helper's parameter, which `saved_values` detaches from the tree, is
    not)."""
    if isinstance(value, ast.Name) and value in ctx.parents:
        return [value, *scoped_values(ctx, value)]
    return [value]


def parts(ctx: Context, value: ast.AST, depth: int = 0) -> list[ast.AST]:
    """The values a saved object holds: ``value`` itself, the values of a dict or list
    literal (nested ones too), and what a name of the file is assigned (one variable)."""
    out: list[ast.AST] = []
    for v in expand(ctx, value) if depth == 0 else [value]:
        if isinstance(v, ast.Dict):
            for item in v.values:
                out += parts(ctx, item, depth + 1) if depth < 3 else [item]
        elif isinstance(v, ast.List | ast.Tuple):
            for item in v.elts:
                out += parts(ctx, item, depth + 1) if depth < 3 else [item]
        else:
            out.append(v)
    return out


def _assigned_call(ctx: Context, name: ast.Name, test: Callable[[ast.Call], bool]) -> bool:
    values = scoped_values(ctx, name) if name in ctx.parents else []
    return any(isinstance(v, ast.Call) and test(v) for v in values)


def rejected(ctx: Context, value: ast.AST) -> tuple[str, str] | None:
    """(kind, name as written) when ``value`` is an object that ``weights_only`` loading
    refuses: an argparse ``Namespace``, an optimizer, an LR scheduler or a ``GradScaler``
    object (not their ``state_dict()``), a NumPy value, a ``pathlib.Path``."""
    if isinstance(value, ast.Call):
        q = ctx.qualname(value.func) or ""
        if q.startswith("numpy.") and q.rsplit(".", 1)[1] not in {"tolist", "item"}:
            return "numpy", ast.unparse(value)
        if method_name(value) == "numpy":
            return "numpy", ast.unparse(value)
        if q in {"pathlib.Path", "pathlib.PurePath"}:
            return "path", ast.unparse(value)
        if method_name(value) == "parse_args" or q == "argparse.Namespace":
            return "namespace", ast.unparse(value)
        return None
    if not isinstance(value, ast.Name | ast.Attribute):
        return None
    name = last_name(value) or ""
    written = ast.unparse(value)
    key = value if isinstance(value, ast.Name) else None
    if key is not None:
        if _assigned_call(ctx, key, lambda c: method_name(c) == "parse_args"):
            return "namespace", written
        if _assigned_call(
            ctx, key, lambda c: (ctx.qualname(c.func) or "").startswith("torch.optim.lr_scheduler.")
        ):
            return "scheduler", written
        if _assigned_call(ctx, key, lambda c: (ctx.qualname(c.func) or "").endswith("GradScaler")):
            return "scaler", written
        if _assigned_call(
            ctx, key, lambda c: (ctx.qualname(c.func) or "").startswith("torch.optim.")
        ):
            return "optimizer", written
        values = scoped_values(ctx, key) if key in ctx.parents else []
        if values and all(
            isinstance(v, ast.Call)
            and ((ctx.qualname(v.func) or "").startswith("numpy.") or method_name(v) == "numpy")
            for v in values
        ):
            return "numpy", written
    if (
        _OPTIMIZER.search(name)
        and not _SCHEDULER.search(name)
        and not name.endswith(("_state", "_dict", "_sd"))
    ):
        return "optimizer", written
    return None
