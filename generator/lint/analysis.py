"""What the rules need to know about one file, computed once: `Context`.

One walk over the ``ast`` tree records each node's parent, groups the nodes by type and
indexes the calls by their resolved name (``torch.cuda.amp.autocast``, whatever the import
alias) and by method name (``.backward()``, ``.item()``). Loop facts (which loops train,
what runs every step, which names hold the loss) are computed on first use. Nothing here
is a type checker: names are resolved through the file's imports only, and the rules stay
conservative where that is not enough.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from functools import cached_property

#: Names that mean the usual module when a file uses them without importing them
#: (snippets pasted into a notebook cell, star imports).
DEFAULT_ALIASES = {
    "torch": "torch",
    "nn": "torch.nn",
    "F": "torch.nn.functional",
    "np": "numpy",
    "dist": "torch.distributed",
}

LOOPS = (ast.For, ast.AsyncFor, ast.While)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)

#: Receivers whose ``.step()`` is an optimizer step (optimizer, opt_g, scaler, ...).
_OPTIMIZER = re.compile(r"optim|^opt(_|$)|_opt$|scaler|^engine$|model_engine", re.I)
#: Receivers whose ``.step()`` advances a learning-rate schedule.
_SCHEDULER = re.compile(r"sched|^lr_|_lr$|^lr$|warmup", re.I)
#: Receivers whose ``.backward(loss)`` takes the loss as an argument (accelerate, DeepSpeed,
#: Lightning Fabric).
_BACKWARD_OWNER = re.compile(r"accelerator|engine|fabric|^self$|manual_backward", re.I)
#: Names that usually hold an ``nn.Module``.
MODEL_NAME = re.compile(
    r"^(?:.*_)?(?:model|net|network|module|encoder|decoder|backbone|classifier)$", re.I
)
_AUTOCAST = {
    "torch.autocast",
    "torch.amp.autocast",
    "torch.amp.autocast_mode.autocast",
    "torch.cuda.amp.autocast",
    "torch.cpu.amp.autocast",
}
_NO_GRAD = {"torch.no_grad", "torch.inference_mode", "torch.autograd.grad_mode.no_grad"}


def last_name(node: ast.AST) -> str | None:
    """``x`` for ``x``, ``step`` for ``a.b.step``; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def dotted(node: ast.AST) -> str | None:
    """The written dotted name of a ``Name``/``Attribute`` chain (``self.model.eval``)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def root_name(node: ast.AST) -> str | None:
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


class Context:
    """One parsed file and the facts the rules share.

    Attributes:
        path: the file name as given to the lint.
        source: its text.
        tree: the ``ast.Module``.
        lines: the source split into lines (``lines[0]`` is line 1).
        imports: local name -> imported dotted name (``F`` -> ``torch.nn.functional``).
        by_type: every node of the tree by its type.
        calls_by_qualname: calls by the resolved name of what they call.
        calls_by_method: calls of the form ``x.name(...)`` by ``name``.
    """

    def __init__(self, tree: ast.Module, source: str, path: str = "<string>") -> None:
        self.path = path
        self.source = source
        self.tree = tree
        self.lines = source.split("\n")
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
        self._memo: dict[tuple[str, ast.AST], object] = {}
        self.imports = self._imports()
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
        return sorted(out, key=_pos)

    def methods(self, *names: str) -> list[ast.Call]:
        """Calls ``x.<name>(...)`` for any of ``names``, in source order."""
        if len(names) == 1:
            return self.calls_by_method.get(names[0], [])
        return sorted((c for n in names for c in self.calls_by_method.get(n, [])), key=_pos)

    def torch_is(self, name: str) -> bool:
        """Whether ``name`` (``torch``) is imported as that module in this file (a fix may
        then write ``torch.amp.autocast``)."""
        return self.imports.get(name) == name

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
            node = value
            while isinstance(node, ast.Call):
                if self.qualname(node.func) in qualnames:
                    return True
                func = node.func
                node = func.value if isinstance(func, ast.Attribute) else None  # type: ignore[assignment]
        return False

    def segment(self, node: ast.AST) -> str:
        """The source text of ``node``."""
        start, end = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        first = self.lines[start - 1].encode("utf-8")
        if start == end:
            return first[node.col_offset : node.end_col_offset].decode("utf-8")  # type: ignore[attr-defined]
        parts = [first[node.col_offset :].decode("utf-8")]  # type: ignore[attr-defined]
        parts += self.lines[start : end - 1]
        parts.append(self.lines[end - 1].encode("utf-8")[: node.end_col_offset].decode("utf-8"))  # type: ignore[attr-defined]
        return "\n".join(parts)

    # --- structure -------------------------------------------------------------------------

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(node)

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

    def functions_named(self, name: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        return [
            f
            for t in FUNCTIONS
            for f in self.by_type[t]
            if isinstance(f, FUNCTIONS) and f.name == name
        ]

    def is_under(self, node: ast.AST, kinds: tuple[type, ...]) -> bool:
        """Whether an ancestor of ``node`` (inside its function) is one of ``kinds``."""
        for anc in self.ancestors(node):
            if isinstance(anc, kinds):
                return True
            if isinstance(anc, SCOPES):
                return False
        return False

    # --- training loops --------------------------------------------------------------------

    def is_backward(self, call: ast.Call) -> bool:
        return method_name(call) == "backward"

    def is_optimizer_step(self, call: ast.Call) -> bool:
        """``optimizer.step()``, ``opt_g.step()``, ``scaler.step(optimizer)``."""
        if method_name(call) != "step":
            return False
        name = last_name(call.func.value)  # type: ignore[attr-defined]
        if name is None or _SCHEDULER.search(name):
            return False
        return bool(_OPTIMIZER.search(name))

    def is_scheduler_step(self, call: ast.Call) -> bool:
        if method_name(call) != "step":
            return False
        recv = call.func.value  # type: ignore[attr-defined]
        name = last_name(recv)
        if name is None:
            return False
        if _SCHEDULER.search(name):
            return True
        return isinstance(recv, ast.Name) and self.assigned_from_prefix(
            recv.id, "torch.optim.lr_scheduler."
        )

    def assigned_from_prefix(self, name: str, prefix: str) -> bool:
        for value in self.assignments.get(name, ()):
            if isinstance(value, ast.Call):
                q = self.qualname(value.func)
                if q is not None and q.startswith(prefix):
                    return True
        return False

    def own_nodes(self, loop: ast.AST) -> list[ast.AST]:
        """The nodes of a loop's body, without nested loops' bodies or nested scopes."""
        out = []
        stack = list(loop.body)  # type: ignore[attr-defined]
        while stack:
            node = stack.pop()
            out.append(node)
            if isinstance(node, SCOPES):
                continue
            if isinstance(node, LOOPS):
                stack.append(node.iter if isinstance(node, ast.For | ast.AsyncFor) else node.test)
                continue
            stack.extend(ast.iter_child_nodes(node))
        return out

    @cached_property
    def training_loops(self) -> list[ast.For | ast.AsyncFor | ast.While]:
        """Loops whose own body calls ``backward()`` or an optimizer's ``step()``."""
        out = []
        for kind in LOOPS:
            for loop in self.by_type[kind]:
                for node in self.own_nodes(loop):
                    if isinstance(node, ast.Call) and (
                        self.is_backward(node) or self.is_optimizer_step(node)
                    ):
                        out.append(loop)
                        break
        return sorted(out, key=_pos)  # type: ignore[arg-type]

    def memo(self, kind: str, node: ast.AST, compute):  # type: ignore[no-untyped-def]
        """``compute()``, computed once per file for ``(kind, node)``."""
        key = (kind, node)
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def step_nodes(self, loop: ast.AST) -> list[ast.AST]:
        """The nodes of ``loop`` that run on every iteration (see `iter_region`)."""
        return self.memo("step", loop, lambda: list(iter_region(loop.body)))  # type: ignore[attr-defined]

    def all_nodes(self, loop: ast.AST) -> list[ast.AST]:
        """The nodes of ``loop``'s body, conditional ones included (not nested scopes)."""
        return self.memo(
            "all",
            loop,
            lambda: list(iter_region(loop.body, conditional=True)),  # type: ignore[attr-defined]
        )

    def loss_names(self, loop: ast.AST) -> set[str]:
        """Names whose value a loop passes to ``backward()``: ``loss`` in ``loss.backward()``,
        ``scaler.scale(loss).backward()`` and ``accelerator.backward(loss)``."""

        def compute() -> set[str]:
            out: set[str] = set()
            for node in self.all_nodes(loop):
                if isinstance(node, ast.Call) and self.is_backward(node):
                    out |= self.backward_losses(node)
            return out

        return set(self.memo("loss", loop, compute))

    def backward_losses(self, call: ast.Call) -> set[str]:
        recv = receiver(call)
        owner = last_name(recv) if recv is not None else None
        if call.args and owner is not None and _BACKWARD_OWNER.search(owner):
            arg = call.args[0]
            return {arg.id} if isinstance(arg, ast.Name) else set()
        if isinstance(recv, ast.Name):
            return {recv.id}
        if isinstance(recv, ast.Call) and method_name(recv) == "scale" and recv.args:
            arg = recv.args[0]
            return {arg.id} if isinstance(arg, ast.Name) else set()
        return set()

    def in_training_loop(self, node: ast.AST) -> bool:
        loops = set(self.training_loops)
        return any(anc in loops for anc in self.ancestors(node))

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

    def mentions_cuda(self) -> bool:
        return "cuda" in self.source

    def name_is_module(self, node: ast.AST) -> bool:
        """Whether ``node`` looks like an ``nn.Module``: a model-like name, or a name bound
        to an ``nn`` layer, a wrapper or a class of this file that subclasses one."""
        name = last_name(node)
        if name is None:
            return False
        if MODEL_NAME.match(name):
            return True
        if isinstance(node, ast.Name):
            for value in self.assignments.get(node.id, ()):
                call = value
                while isinstance(call, ast.Call):
                    q = self.qualname(call.func)
                    if q and q.startswith("torch.nn.") and q.rsplit(".", 1)[1][:1].isupper():
                        return True
                    if isinstance(call.func, ast.Name) and call.func.id in self.module_classes:
                        return True
                    call = call.func.value if isinstance(call.func, ast.Attribute) else None  # type: ignore[assignment]
        return False

    @cached_property
    def module_classes(self) -> set[str]:
        """Classes of this file that subclass ``nn.Module`` (directly or through each other)."""
        classes = [c for c in self.by_type[ast.ClassDef] if isinstance(c, ast.ClassDef)]
        out: set[str] = set()
        changed = True
        while changed:
            changed = False
            for cls in classes:
                if cls.name in out:
                    continue
                for base in cls.bases:
                    q = self.qualname(base) or ""
                    if (q.startswith("torch.nn.") and q.rsplit(".", 1)[1][:1].isupper()) or (
                        isinstance(base, ast.Name) and base.id in out
                    ):
                        out.add(cls.name)
                        changed = True
                        break
        return out

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
        callers = [
            c
            for c in self.by_type[ast.Call]
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == func.name
        ]
        return any(
            not self.is_conditional(c) and self.enclosing_function(c) is not func for c in callers
        )

    @cached_property
    def trains_on_cuda(self) -> bool:
        """Whether the file trains, and puts its work on a CUDA device without a condition
        (``.cuda()``, ``torch.device("cuda")``, ``"cuda"`` as a device,
        ``torch.cuda.set_device``, the NCCL backend)."""
        if not self.training_loops or "cuda" not in self.source and "nccl" not in self.source:
            return False
        signals: list[ast.AST] = []
        signals += self.methods("cuda")
        signals += self.calls("torch.cuda.set_device")
        for call in self.calls("torch.device", "torch.distributed.init_process_group"):
            first = call.args[0] if call.args else getattr(kwarg(call, "backend"), "value", None)
            if isinstance(first, ast.Constant) and str(first.value).startswith(("cuda", "nccl")):
                signals.append(call)
        for const in self.by_type[ast.Constant]:
            assert isinstance(const, ast.Constant)
            if not (isinstance(const.value, str) and re.fullmatch(r"cuda(:\d+)?", const.value)):
                continue
            parent = self.parent(const)
            if isinstance(parent, ast.keyword) and parent.arg == "device":
                signals.append(const)
            elif isinstance(parent, ast.Call) and method_name(parent) == "to":
                signals.append(const)
            elif isinstance(parent, ast.Assign):
                signals.append(const)
        return any(not self.is_conditional(s) for s in signals)

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

    @cached_property
    def functions(self) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
        """Functions of this file by name (the last definition wins)."""
        out = {}
        for kind in FUNCTIONS:
            for f in self.by_type[kind]:
                assert isinstance(f, FUNCTIONS)
                out[f.name] = f
        return out

    def _calls_in(self, node: ast.AST, pred, follow: bool) -> bool:  # type: ignore[no-untyped-def]
        for n in iter_region([node], conditional=True):
            if isinstance(n, ast.Call):
                if pred(n):
                    return True
                if follow and isinstance(n.func, ast.Name) and n.func.id in self.functions:
                    func = self.functions[n.func.id]
                    if any(self._calls_in(s, pred, False) for s in func.body):
                        return True
        return False

    def steps_optimizer(self, node: ast.AST, follow: bool = True) -> bool:
        """Whether ``node`` calls an optimizer's ``step()``, itself or through a function of
        this file it calls (one level)."""
        return self._calls_in(node, self.is_optimizer_step, follow)

    def trains(self, node: ast.AST, follow: bool = True) -> bool:
        """Whether ``node`` calls ``backward()`` or an optimizer step (one level of calls)."""
        return self._calls_in(
            node, lambda c: self.is_backward(c) or self.is_optimizer_step(c), follow
        )


def _is_main_check(test: ast.AST) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


def _pos(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
