"""Small questions about single ``ast`` nodes that the rules and `generator.lint.analysis.Context`
ask: the written name of a call, its keyword arguments, its receiver, the statements of a
region. Pure functions on the tree; nothing here knows about a whole file."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

LOOPS = (ast.For, ast.AsyncFor, ast.While)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
#: The nodes that carry a position in the source (``lineno``, ``col_offset``...).
LOCATED = (ast.expr, ast.stmt, ast.arg, ast.keyword, ast.alias, ast.excepthandler, ast.pattern)


def span(node: ast.AST) -> tuple[int, int, int, int]:
    """Where ``node`` is: (line, column, end line, end column), 1-based lines and 0-based
    columns counted in UTF-8 bytes, as the ``ast`` module gives them.

    Raises:
        TypeError: a node without a position (a ``withitem``, ``comprehension``...).
    """
    if not isinstance(node, LOCATED):
        raise TypeError(f"an ast.{type(node).__name__} has no position")
    end_line, end_col = node.end_lineno, node.end_col_offset
    if end_line is None or end_col is None:  # set by ast.parse; absent in built trees
        return node.lineno, node.col_offset, node.lineno, node.col_offset
    return node.lineno, node.col_offset, end_line, end_col


def last_name(node: ast.AST | None) -> str | None:
    """``x`` for ``x``, ``step`` for ``a.b.step``; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def dotted(node: ast.AST | None) -> str | None:
    """The written dotted name of a ``Name``/``Attribute`` chain (``self.model.eval``)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def root_name(node: ast.AST | None) -> str | None:
    """The name at the root of attribute, call, subscript and method chains."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def kwarg(call: ast.Call, name: str) -> ast.keyword | None:
    """The keyword argument ``name`` of ``call``."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    return None


def has_star_kwargs(call: ast.Call) -> bool:
    """Whether ``call`` passes ``**kwargs`` (any keyword might hide in there)."""
    return any(kw.arg is None for kw in call.keywords)


def has_star_args(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args)


def is_const(node: ast.AST | None, value: object) -> bool:
    """Whether ``node`` is the literal ``value`` (``True`` is not ``1`` here)."""
    return (
        isinstance(node, ast.Constant) and type(node.value) is type(value) and node.value == value
    )


def method_name(call: ast.Call) -> str | None:
    """``item`` for ``x.item()``."""
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def receiver(call: ast.Call) -> ast.AST | None:
    """``x`` for ``x.item()``."""
    return call.func.value if isinstance(call.func, ast.Attribute) else None


def iter_region(stmts: Iterable[ast.AST], *, conditional: bool = False) -> Iterator[ast.AST]:
    """Every node that runs when ``stmts`` run once, without entering nested functions,
    classes or lambdas. Unless ``conditional``, the bodies of ``if``/``match`` statements
    and exception handlers are left out (their tests are kept): what remains runs on every
    pass."""
    stack = list(stmts)
    stack.reverse()
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, SCOPES):
            continue
        if not conditional:
            if isinstance(node, ast.If):
                stack.append(node.test)
                continue
            if isinstance(node, ast.Match):
                stack.append(node.subject)
                continue
            if isinstance(node, ast.Try | ast.TryStar):
                children: list[ast.AST] = [*node.body, *node.orelse, *node.finalbody]
                stack.extend(reversed(children))
                continue
            if isinstance(node, ast.IfExp):
                stack.append(node.test)
                continue
        children = list(ast.iter_child_nodes(node))
        stack.extend(reversed(children))
