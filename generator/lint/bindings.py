"""Which names of a file may be rewritten through: `unsure_names`.

A fix that rewrites a call through a name (``autocast(...)`` after ``from torch.cuda.amp
import autocast``, ``amp.autocast(...)`` after ``amp = torch.cuda.amp``) keeps the program's
behaviour only where every path that binds the name binds the same thing. The lint resolves
names through the file's imports and single assignments, flow-insensitively; that is enough
to report, not to rewrite, when the name is bound more than once:

* an import and an assignment, or imports of two different things (``try``/``except
  ImportError``, ``if use_fp16: from torch.cuda.amp import autocast``);
* a parameter, a loop target, a ``with ... as``, an ``except ... as``, a function or class,
  an annotated or augmented assignment or an assignment expression of the same name, in any
  scope (``def evaluate(model, autocast=nullcontext)`` beside a module-level alias);
* an assignment from a conditional expression (``autocast = torch.cuda.amp.autocast if
  use_fp16 else nullcontext``): one statement, two meanings.

Every binding statement counts once, except imports, which count once per thing imported:
``import torch`` at the top and again in a function is one binding. The findings on such
names stand; their fixes are left out (`generator.lint.analysis.Context.rewritable`).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any


def _imported(node: ast.Import | ast.ImportFrom, alias: ast.alias) -> tuple[str, str]:
    """The name an import binds, and what it binds it to (a dotted name)."""
    if isinstance(node, ast.Import):
        if alias.asname:
            return alias.asname, alias.name
        top = alias.name.split(".")[0]
        return top, top
    module = "." * node.level + (node.module or "")
    return alias.asname or alias.name, f"{module}.{alias.name}"


def unsure_names(nodes: Mapping[type, Sequence[ast.AST]]) -> frozenset[str]:
    """The names a file binds in more than one way, or through a conditional expression;
    ``nodes``: the file's nodes by type (`generator.lint.analysis.Context.by_type`)."""
    ways: defaultdict[str, set[object]] = defaultdict(set)
    unsure: set[str] = set()

    def of(*kinds: type) -> Iterator[Any]:
        for kind in kinds:
            yield from nodes.get(kind, ())

    for node in of(ast.Import, ast.ImportFrom):
        for alias in node.names:
            if alias.name != "*":
                name, what = _imported(node, alias)
                ways[name].add(what)
    for node in of(ast.Name):
        if not isinstance(node.ctx, ast.Load):
            ways[node.id].add(id(node))  # an assignment, a target, `del`: this statement
    for node in of(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        ways[node.name].add(id(node))
    for node in of(ast.arg):
        ways[node.arg].add(id(node))
    for node in of(ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
        if node.name:
            ways[node.name].add(id(node))
    for node in of(ast.MatchMapping):
        if node.rest:
            ways[node.rest].add(id(node))
    for node in of(ast.Global, ast.Nonlocal):
        unsure.update(node.names)  # rebound from a function: when is not known here
    for node in of(ast.Assign, ast.AnnAssign, ast.NamedExpr):
        if isinstance(node.value, ast.IfExp):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            unsure.update(t.id for t in targets if isinstance(t, ast.Name))
    unsure.update(name for name, found in ways.items() if len(found) > 1)
    return frozenset(unsure)
