"""What the rules need to know about one file, computed once: `Context`.

One walk over the ``ast`` tree records each node's parent, groups the nodes by type and
indexes the calls by their resolved name (``torch.cuda.amp.autocast``, whatever the import
alias) and by method name (``.backward()``, ``.item()``). Loop facts (which loops train,
what runs every step, which names hold the loss) are ``ctx.loops``
(`generator.lint.training.TrainingLoops`), computed on first use. Nothing here
is a type checker: names are resolved through the file's imports only, and the rules stay
conservative where that is not enough.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Hashable, Iterator
from functools import cached_property
from typing import Any

from generator.lint.bindings import unsure_names
from generator.lint.flags import Flags
from generator.lint.flow import StepFlow
from generator.lint.lines import Lines
from generator.lint.modules import ModuleNames
from generator.lint.syntax import (
    FUNCTIONS,
    SCOPES,
    dotted,
    is_const,
    kwarg,
    root_name,
    span,
)
from generator.lint.training import Function, TrainingLoops, node_position

#: Names that mean the usual module when a file uses them without importing them
#: (snippets pasted into a notebook cell, star imports).
DEFAULT_ALIASES = {
    "torch": "torch",
    "nn": "torch.nn",
    "F": "torch.nn.functional",
    "np": "numpy",
    "dist": "torch.distributed",
}

_AUTOCAST = {
    "torch.autocast",
    "torch.amp.autocast",
    "torch.amp.autocast_mode.autocast",
    "torch.cuda.amp.autocast",
    "torch.cpu.amp.autocast",
}
_NO_GRAD = {"torch.no_grad", "torch.inference_mode", "torch.autograd.grad_mode.no_grad"}


class Context:
    """One parsed file and the facts the rules share.

    Attributes:
        path: the file name as given to the lint.
        source: its text.
        tree: the ``ast.Module``.
        lines: the source split into lines as ``ast`` splits them (``lines[0]`` is line 1;
            `generator.lint.lines.Lines`).
        imports: local name -> imported dotted name (``F`` -> ``torch.nn.functional``).
        by_type: every node of the tree by its type.
        calls_by_qualname: calls by the resolved name of what they call.
        calls_by_method: calls of the form ``x.name(...)`` by ``name``.
        loops: the training loops and what runs in them.
        flow: which guards of a loop run on every step, and flags' literal defaults.
        modules: which names hold modules.
        flags: command-line flags with literal defaults.
    """

    def __init__(self, tree: ast.Module, source: str, path: str = "<string>") -> None:
        self.path = path
        self.source = source
        self.tree = tree
        self.lines = Lines(source)
        self.parents: dict[ast.AST, ast.AST] = {}
        self.by_type: defaultdict[type, list[ast.AST]] = defaultdict(list)
        stack: list[ast.AST] = [tree]
        parents = self.parents
        by_type = self.by_type
        while stack:
            node = stack.pop()
            by_type[type(node)].append(node)
            for child in ast.iter_child_nodes(node):
                parents[child] = node
                stack.append(child)
        for nodes in by_type.values():
            nodes.reverse()  # roughly source order: the stack pops children last-first
        self.imports = self._imports()
        self.imports |= self._aliases()
        self.calls_by_qualname: defaultdict[str, list[ast.Call]] = defaultdict(list)
        self.calls_by_method: defaultdict[str, list[ast.Call]] = defaultdict(list)
        for call in by_type[ast.Call]:
            assert isinstance(call, ast.Call)
            func = call.func
            if isinstance(func, ast.Attribute):
                self.calls_by_method[func.attr].append(call)
            q = self.qualname(func)
            if q is not None:
                self.calls_by_qualname[q].append(call)
        self.loops = TrainingLoops(self)
        self.flow = StepFlow(self)
        self.modules = ModuleNames(self)
        self.flags = Flags(self)
        #: Facts a rule computes once per file (or per scope) and asks for many times.
        self.memo: dict[Hashable, Any] = {}

    # --- names -----------------------------------------------------------------------------

    def _imports(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for node in self.by_type[ast.Import]:
            assert isinstance(node, ast.Import)
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    out[top] = top
        for node in self.by_type[ast.ImportFrom]:
            assert isinstance(node, ast.ImportFrom)
            if node.level or not node.module:
                continue
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return out

    def _aliases(self) -> dict[str, str]:
        """Names bound once, to a torch name (``Tensor = torch.cuda.FloatTensor``, or either
        side of ``... if cuda else torch.FloatTensor``): they resolve like an import, for the
        findings (a fix through one needs `rewritable`)."""
        seen: dict[str, int] = {}
        found: dict[str, str] = {}
        for node in self.by_type[ast.Assign]:
            assert isinstance(node, ast.Assign)
            for target in node.targets:
                if isinstance(target, ast.Name):
                    seen[target.id] = seen.get(target.id, 0) + 1
                    sides = (
                        [node.value.body, node.value.orelse]
                        if isinstance(node.value, ast.IfExp)
                        else [node.value]
                    )
                    for value in sides:
                        q = self.qualname(value) if isinstance(value, ast.Attribute) else None
                        if (
                            q is not None
                            and q.startswith("torch.")
                            and target.id not in self.imports
                        ):
                            found[target.id] = q
                            break
        return {name: q for name, q in found.items() if seen[name] == 1}

    def qualname(self, node: ast.AST) -> str | None:
        """The imported dotted name that ``node`` refers to (``torch.cuda.amp.autocast``
        for ``amp.autocast`` after ``from torch.cuda import amp``), or None."""
        written = dotted(node)
        if written is None:
            return None
        head, dot, rest = written.partition(".")
        base = self.imports.get(head) or DEFAULT_ALIASES.get(head)
        if base is None:
            return None
        return base + dot + rest

    def calls(self, *qualnames: str) -> list[ast.Call]:
        """Calls of any of ``qualnames``, in source order."""
        if len(qualnames) == 1:
            return self.calls_by_qualname.get(qualnames[0], [])
        out = [c for q in qualnames for c in self.calls_by_qualname.get(q, [])]
        return sorted(out, key=node_position)

    def methods(self, *names: str) -> list[ast.Call]:
        """Calls ``x.<name>(...)`` for any of ``names``, in source order."""
        if len(names) == 1:
            return self.calls_by_method.get(names[0], [])
        return sorted(
            (c for n in names for c in self.calls_by_method.get(n, [])), key=node_position
        )

    def torch_is(self, name: str) -> bool:
        """Whether ``name`` (``torch``) is imported as that module in this file, and bound
        to nothing else (a fix may then write ``torch.amp.autocast``)."""
        return self.imports.get(name) == name and name not in self.unsure_names

    @cached_property
    def unsure_names(self) -> frozenset[str]:
        """Names bound in more than one way, or through a conditional expression
        (`generator.lint.bindings`): found through, never rewritten through."""
        return unsure_names(self.by_type)

    def rewritable(self, node: ast.AST) -> bool:
        """Whether a fix may rewrite the call of ``node`` (``autocast``, ``amp.autocast``,
        ``nn.utils.clip_grad_norm``): the name it starts with means one thing wherever the
        call runs. A name the file never binds is taken as the usual module
        (`DEFAULT_ALIASES`), as everywhere in the lint."""
        name = root_name(node)
        return name is not None and name not in self.unsure_names

    @cached_property
    def assignments(self) -> dict[str, list[ast.AST]]:
        """Name -> the values assigned to it anywhere in the file (flow-insensitive)."""
        out: defaultdict[str, list[ast.AST]] = defaultdict(list)
        for node in self.by_type[ast.Assign]:
            assert isinstance(node, ast.Assign)
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id].append(node.value)
        for node in self.by_type[ast.AnnAssign]:
            assert isinstance(node, ast.AnnAssign)
            if isinstance(node.target, ast.Name) and node.value is not None:
                out[node.target.id].append(node.value)
        return out

    def assigned_from(self, name: str, qualnames: set[str]) -> bool:
        """Whether some assignment to ``name`` calls one of ``qualnames`` (directly, or as
        the receiver of a method chain such as ``DDP(m).to(device)``)."""
        for value in self.assignments.get(name, ()):
            node: ast.AST | None = value
            while isinstance(node, ast.Call):
                if self.qualname(node.func) in qualnames:
                    return True
                func = node.func
                node = func.value if isinstance(func, ast.Attribute) else None
        return False

    def segment(self, node: ast.AST) -> str:
        """The source text of ``node``."""
        start, col, end, end_col = span(node)
        first = self.lines[start - 1].encode("utf-8")
        if start == end:
            return first[col:end_col].decode("utf-8")
        parts = [first[col:].decode("utf-8")]
        parts += self.lines[start : end - 1]
        parts.append(self.lines[end - 1].encode("utf-8")[:end_col].decode("utf-8"))
        return "\n".join(parts)

    @cached_property
    def calls_by_name(self) -> dict[str, list[ast.Call]]:
        """Calls of a plain name, ``f(...)``, by the name."""
        out: defaultdict[str, list[ast.Call]] = defaultdict(list)
        for call in self.by_type[ast.Call]:
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                out[call.func.id].append(call)
        return out

    # --- structure -------------------------------------------------------------------------

    def parent(self, node: ast.AST | None) -> ast.AST | None:
        """The node that holds ``node`` (None for the module, and for None)."""
        return self.parents.get(node) if node is not None else None

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        node_ = self.parents.get(node)
        while node_ is not None:
            yield node_
            node_ = self.parents.get(node_)

    def enclosing_function(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        for anc in self.ancestors(node):
            if isinstance(anc, FUNCTIONS):
                return anc
            if isinstance(anc, ast.ClassDef | ast.Lambda):
                return None
        return None

    def scope_body(self, node: ast.AST) -> list[ast.stmt]:
        """The statements of the function (or module) that contains ``node``."""
        func = self.enclosing_function(node)
        return func.body if func is not None else self.tree.body

    @cached_property
    def blocks(self) -> list[list[ast.stmt]]:
        """Every statement list of the file (bodies, ``else`` parts, handlers)."""
        out = [self.tree.body]
        for types in (
            ast.FunctionDef,
            ast.AsyncFunctionDef,
            ast.ClassDef,
            ast.For,
            ast.AsyncFor,
            ast.While,
            ast.If,
            ast.With,
            ast.AsyncWith,
            ast.Try,
            ast.ExceptHandler,
        ):
            for node in self.by_type[types]:
                for name in ("body", "orelse", "finalbody"):
                    stmts = getattr(node, name, None)
                    if stmts:
                        out.append(stmts)
        return out

    @cached_property
    def functions(self) -> dict[str, Function]:
        """Functions of this file by name (the last definition wins)."""
        out: dict[str, Function] = {}
        for kind in FUNCTIONS:
            for f in self.by_type[kind]:
                assert isinstance(f, FUNCTIONS)
                out[f.name] = f
        return out

    def functions_named(self, name: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        return [
            f
            for t in FUNCTIONS
            for f in self.by_type[t]
            if isinstance(f, FUNCTIONS) and f.name == name
        ]

    # --- recurring facts -------------------------------------------------------------------

    def is_autocast_item(self, expr: ast.AST) -> bool:
        """Whether a ``with`` item enters autocast (not ``enabled=False``): a call, or a name
        bound to an expression that contains one (nanoGPT's ``ctx``)."""
        if isinstance(expr, ast.Call) and self.qualname(expr.func) in _AUTOCAST:
            return not is_const(getattr(kwarg(expr, "enabled"), "value", None), False)
        if isinstance(expr, ast.Name):
            for value in self.assignments.get(expr.id, ()):
                for node in ast.walk(value):
                    if isinstance(node, ast.Call) and self.qualname(node.func) in _AUTOCAST:
                        return True
        return False

    def is_no_grad(self, expr: ast.AST) -> bool:
        """``torch.no_grad()`` or ``torch.inference_mode()`` (as called or as written)."""
        if isinstance(expr, ast.Call):
            expr = expr.func
        return self.qualname(expr) in _NO_GRAD

    def name_is_module(self, node: ast.AST) -> bool:
        """Whether ``node`` looks like an ``nn.Module`` (`generator.lint.modules`)."""
        return self.modules.is_module(node)

    @property
    def module_classes(self) -> set[str]:
        """Classes of this file that subclass ``nn.Module`` (directly or through each other)."""
        return self.modules.classes

    # --- conditions ------------------------------------------------------------------------

    def is_conditional(self, node: ast.AST) -> bool:
        """Whether ``node`` runs only under an ``if`` (other than ``if __name__ ==
        "__main__"``), a ``match`` case or an exception handler of its own function."""
        child = node
        for anc in self.ancestors(node):
            if isinstance(anc, SCOPES):
                return False
            if isinstance(anc, ast.If) and child is not anc.test and not _is_main_check(anc.test):
                return True
            if isinstance(anc, ast.IfExp) and child is not anc.test:
                return True
            if isinstance(anc, ast.ExceptHandler | ast.match_case):
                return True
            child = anc
        return False

    def runs_unconditionally(self, node: ast.AST) -> bool:
        """Whether ``node`` runs without a condition: at module level, or in a function of
        this file that some unconditional code calls (one level of calls is followed)."""
        if self.is_conditional(node):
            return False
        func = self.enclosing_function(node)
        if func is None:
            return not any(isinstance(a, ast.ClassDef | ast.Lambda) for a in self.ancestors(node))
        callers = self.calls_by_name.get(func.name, [])
        return any(
            not self.is_conditional(c) and self.enclosing_function(c) is not func for c in callers
        )

    # --- regions and one level of calls -----------------------------------------------------

    def in_no_grad(self, node: ast.AST) -> bool:
        """Whether ``node`` runs under ``torch.no_grad()``/``inference_mode()``: a ``with``
        around it, or a decorator on its function."""
        for anc in self.ancestors(node):
            if isinstance(anc, ast.With | ast.AsyncWith):
                if any(self.is_no_grad(item.context_expr) for item in anc.items):
                    return True
            elif isinstance(anc, FUNCTIONS):
                return any(self.is_no_grad(d) for d in anc.decorator_list)
            elif isinstance(anc, ast.ClassDef | ast.Lambda):
                return False
        return False


def _is_main_check(test: ast.AST) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )
