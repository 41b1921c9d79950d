"""Which loops train, and what runs in them: `TrainingLoops`, the training-loop facts of one
file (``ctx.loops`` of `generator.lint.analysis.Context`), computed on first use from the
file's index (`FileIndex`).

A loop is a training loop when its own body (not a nested loop's) makes a *training call*:
``backward()``, an optimizer's ``step()``, a callable that receives both the optimizer and a
loss (``loss_scaler(loss, optimizer)``, as timm, MAE and Swin write it), or one level of a
function of this file that makes one in its own body (a local function, a closure such as
timm's ``_backward``, or a method called on ``self`` such as ``self._run_batch()``). A helper
whose training call sits inside its own loop runs a whole epoch, so the loop around it is an
epoch loop, not a training loop. Its *step nodes* run every iteration; the names its
backward passes take are its losses.
"""

from __future__ import annotations

import ast
import re
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cached_property, wraps
from typing import Literal, Protocol, TypeVar

from generator.lint.syntax import (
    FUNCTIONS,
    LOOPS,
    SCOPES,
    iter_region,
    kwarg,
    last_name,
    method_name,
    receiver,
)

#: Receivers whose ``.step()`` is an optimizer step (optimizer, opt_g, scaler, ...).
_OPTIMIZER = re.compile(r"optim|^opt(_|$)|_opt$|scaler|^engine$|model_engine", re.I)
#: Receivers whose ``.step()`` advances a learning-rate schedule.
_SCHEDULER = re.compile(r"sched|^lr_|_lr$|^lr$|warmup", re.I)
#: Receivers whose ``.backward(loss)`` takes the loss as an argument (accelerate, DeepSpeed,
#: Lightning Fabric).
_BACKWARD_OWNER = re.compile(r"accelerator|engine|fabric|^self$|manual_backward", re.I)
#: Arguments that are an optimizer (not a scaler or a schedule), and arguments that are a loss.
_OPTIMIZER_ARG = re.compile(r"optim|^opt(_|$)|_opt$|^opt[A-Z]", re.I)
_LOSS_ARG = re.compile(r"(^|_)loss(es)?$", re.I)


#: How a file puts its training on a CUDA device (`TrainingLoops.cuda_use`).
CudaUse = Literal["always", "maybe"]
Function = ast.FunctionDef | ast.AsyncFunctionDef
Loop = ast.For | ast.AsyncFor | ast.While

_Owner = TypeVar("_Owner")
_Node = TypeVar("_Node", bound=ast.AST)
_T = TypeVar("_T")


def node_position(node: ast.AST) -> tuple[int, int]:
    """(line, column) of ``node``, for sorting nodes in source order."""
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def per_node(method: Callable[[_Owner, _Node], _T]) -> Callable[[_Owner, _Node], _T]:
    """``method(owner, node)``, computed once per owner (one file's analysis) and node: a
    `functools.cache` whose entries go with their owner. Callers share the value returned."""
    caches: weakref.WeakKeyDictionary[_Owner, dict[_Node, _T]] = weakref.WeakKeyDictionary()

    @wraps(method)
    def cached(owner: _Owner, node: _Node) -> _T:
        cache = caches.get(owner)
        if cache is None:
            cache = caches[owner] = {}
        if node not in cache:
            cache[node] = method(owner, node)
        return cache[node]

    return cached


class FileIndex(Protocol):
    """What `TrainingLoops` reads of a file: the index that `generator.lint.analysis.Context`
    builds."""

    @property
    def source(self) -> str: ...
    @property
    def by_type(self) -> Mapping[type, Sequence[ast.AST]]: ...
    @property
    def assignments(self) -> Mapping[str, Sequence[ast.AST]]: ...
    @property
    def functions(self) -> Mapping[str, Function]: ...
    def qualname(self, node: ast.AST) -> str | None: ...
    def calls(self, *qualnames: str) -> list[ast.Call]: ...
    def methods(self, *names: str) -> list[ast.Call]: ...
    def parent(self, node: ast.AST) -> ast.AST | None: ...
    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]: ...
    def is_conditional(self, node: ast.AST) -> bool: ...


class TrainingLoops:
    """The training loops of one file and what runs in them (``ctx.loops``), read from the
    file's index."""

    def __init__(self, index: FileIndex) -> None:
        self.index = index

    def is_backward(self, call: ast.Call) -> bool:
        return method_name(call) == "backward"

    def is_optimizer_step(self, call: ast.Call) -> bool:
        """``optimizer.step()``, ``opt_g.step()``, ``scaler.step(optimizer)``."""
        if method_name(call) != "step" or not isinstance(call.func, ast.Attribute):
            return False
        name = last_name(call.func.value)
        if name is None or _SCHEDULER.search(name):
            return False
        return bool(_OPTIMIZER.search(name))

    def is_scheduler_step(self, call: ast.Call) -> bool:
        if method_name(call) != "step" or not isinstance(call.func, ast.Attribute):
            return False
        recv = call.func.value
        name = last_name(recv)
        if name is None:
            return False
        if _SCHEDULER.search(name):
            return True
        return isinstance(recv, ast.Name) and self.assigned_from_prefix(
            recv.id, "torch.optim.lr_scheduler."
        )

    def is_scheduler_name(self, recv: ast.AST) -> bool:
        """Whether ``recv`` holds an LR scheduler: a scheduler-like name, or a name assigned
        one of ``torch.optim.lr_scheduler``'s classes."""
        name = last_name(recv)
        if name is None:
            return False
        if _SCHEDULER.search(name) and not _OPTIMIZER.search(name):
            return True
        return isinstance(recv, ast.Name) and self.assigned_from_prefix(
            recv.id, "torch.optim.lr_scheduler."
        )

    def assigned_from_prefix(self, name: str, prefix: str) -> bool:
        for value in self.index.assignments.get(name, ()):
            if isinstance(value, ast.Call):
                q = self.index.qualname(value.func)
                if q is not None and q.startswith(prefix):
                    return True
        return False

    def own_nodes(self, loop: Loop | Function) -> list[ast.AST]:
        """The nodes of a loop's (or function's) body, without nested loops' bodies or nested
        scopes."""
        out: list[ast.AST] = []
        stack: list[ast.AST] = list(loop.body)
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

    def _is_optimizer_arg(self, node: ast.AST) -> bool:
        name = last_name(node)
        return bool(name and _OPTIMIZER_ARG.search(name) and not _SCHEDULER.search(name))

    def _loss_args(self, call: ast.Call) -> set[str]:
        """Loss-named variables among the arguments of ``call`` (``loss``, ``d_loss / n``)."""
        out = set()
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            for n in ast.walk(arg):
                if isinstance(n, ast.Name) and _LOSS_ARG.search(n.id):
                    out.add(n.id)
        return out

    def passes_loss_to_optimizer(self, call: ast.Call) -> bool:
        """A call that receives the optimizer and a loss: ``loss_scaler(loss, optimizer)``."""
        values = [*call.args, *(k.value for k in call.keywords)]
        return any(self._is_optimizer_arg(v) for v in values) and bool(self._loss_args(call))

    def is_training_call(self, call: ast.Call) -> bool:
        """``backward()``, an optimizer step, or a callable given the optimizer and a loss."""
        return (
            self.is_backward(call)
            or self.is_optimizer_step(call)
            or self.passes_loss_to_optimizer(call)
        )

    def helper_of(self, call: ast.Call) -> Function | None:
        """The function of this file that ``call`` runs: ``f(...)`` for a function (or closure)
        named ``f``, ``self.m(...)`` for the method ``m`` of the enclosing class."""
        func = call.func
        if isinstance(func, ast.Name):
            return self.index.functions.get(func.id)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
        ):
            for anc in self.index.ancestors(call):
                if isinstance(anc, ast.ClassDef):
                    for stmt in anc.body:
                        if isinstance(stmt, FUNCTIONS) and stmt.name == func.attr:
                            return stmt
                    return None
        return None

    @per_node
    def helper_trains(self, func: Function) -> bool:
        """Whether a function makes a training call in its own body (not in a loop of its own,
        which would make it a whole epoch)."""
        return any(
            isinstance(n, ast.Call) and self.is_training_call(n) for n in self.own_nodes(func)
        )

    def trains_step(self, call: ast.Call) -> bool:
        """Whether ``call`` is a training call, itself or through one helper of this file."""
        if self.is_training_call(call):
            return True
        helper = self.helper_of(call)
        return helper is not None and self.helper_trains(helper)

    @cached_property
    def training_loops(self) -> list[Loop]:
        """Loops whose own body makes a training call (see the module's docstring)."""
        out: list[Loop] = []
        for kind in LOOPS:
            for loop in self.index.by_type.get(kind, ()):
                assert isinstance(loop, LOOPS)
                for node in self.own_nodes(loop):
                    if isinstance(node, ast.Call) and self.trains_step(node):
                        out.append(loop)
                        break
        return sorted(out, key=node_position)

    @per_node
    def step_nodes(self, loop: Loop) -> list[ast.AST]:
        """The nodes of ``loop`` that run on every iteration (see `iter_region`)."""
        return list(iter_region(loop.body))

    @per_node
    def all_nodes(self, loop: Loop) -> list[ast.AST]:
        """The nodes of ``loop``'s body, conditional ones included (not nested scopes)."""
        return list(iter_region(loop.body, conditional=True))

    def loss_names(self, loop: Loop) -> set[str]:
        """Names whose value a loop passes to ``backward()``: ``loss`` in ``loss.backward()``,
        ``scaler.scale(loss).backward()`` and ``accelerator.backward(loss)``; the loss given
        to ``loss_scaler(loss, optimizer)``; the argument a helper of this file passes on to
        its own ``backward()`` (timm's ``_backward(loss)``). A new set on each call."""
        return set(self._loss_names(loop))

    @per_node
    def _loss_names(self, loop: Loop) -> set[str]:
        out: set[str] = set()
        for node in self.all_nodes(loop):
            if not isinstance(node, ast.Call):
                continue
            if self.is_backward(node):
                out |= self.backward_losses(node)
            elif self.passes_loss_to_optimizer(node):
                out |= self._loss_args(node)
            elif (helper := self.helper_of(node)) is not None and self.helper_trains(helper):
                out |= self._helper_losses(node, helper)
        return out

    def _helper_losses(self, call: ast.Call, helper: Function) -> set[str]:
        """The names ``call`` passes to the parameters that ``helper`` backpropagates."""
        inner: set[str] = set()
        for n in self.own_nodes(helper):
            if isinstance(n, ast.Call):
                if self.is_backward(n):
                    inner |= self.backward_losses(n)
                elif self.passes_loss_to_optimizer(n):
                    inner |= self._loss_args(n)
        params = [a.arg for a in [*helper.args.posonlyargs, *helper.args.args]]
        if params and params[0] in {"self", "cls"} and isinstance(call.func, ast.Attribute):
            params = params[1:]
        out: set[str] = set()
        for i, arg in enumerate(call.args):
            if i < len(params) and params[i] in inner and isinstance(arg, ast.Name):
                out.add(arg.id)
        for kw in call.keywords:
            if kw.arg in inner and isinstance(kw.value, ast.Name):
                out.add(kw.value.id)
        return out

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

    def _calls_in(self, node: ast.AST, pred: Callable[[ast.Call], bool], follow: bool) -> bool:
        for n in iter_region([node], conditional=True):
            if isinstance(n, ast.Call):
                if pred(n):
                    return True
                if follow and (func := self.helper_of(n)) is not None:
                    if any(self._calls_in(s, pred, False) for s in func.body):
                        return True
        return False

    def steps_optimizer(self, node: ast.AST, follow: bool = True) -> bool:
        """Whether ``node`` calls an optimizer's ``step()``, itself or through a function of
        this file it calls (one level)."""
        return self._calls_in(node, self.is_optimizer_step, follow)

    def trains(self, node: ast.AST, follow: bool = True) -> bool:
        """Whether ``node`` makes a training call, anywhere in it (loops included), itself or
        through a function of this file it calls (one level)."""
        return self._calls_in(node, self.is_training_call, follow)

    # --- where the file trains --------------------------------------------------------------

    @cached_property
    def cuda_use(self) -> CudaUse | None:
        """How the file puts its training on a CUDA device: ``"always"`` without a condition
        (``.cuda()``, ``torch.device("cuda")``, ``"cuda"`` as a device, ``set_device``, the
        NCCL backend), ``"maybe"`` only under one (``"cuda" if torch.cuda.is_available() else
        "cpu"``, ``if args.cuda: model.cuda()``), None when it does not train or never names
        CUDA."""
        index = self.index
        if not self.training_loops or ("cuda" not in index.source and "nccl" not in index.source):
            return None
        signals: list[ast.AST] = []
        signals += index.methods("cuda")
        signals += index.calls("torch.cuda.set_device")
        for call in index.calls("torch.device", "torch.distributed.init_process_group"):
            first = call.args[0] if call.args else getattr(kwarg(call, "backend"), "value", None)
            if isinstance(first, ast.Constant) and str(first.value).startswith(("cuda", "nccl")):
                signals.append(call)
        maybe = False
        for const in index.by_type.get(ast.Constant, ()):
            assert isinstance(const, ast.Constant)
            if not (isinstance(const.value, str) and re.fullmatch(r"cuda(:\d+)?", const.value)):
                continue
            parent = index.parent(const)
            if isinstance(parent, ast.keyword) and parent.arg == "device":
                signals.append(const)
            elif isinstance(parent, ast.Call) and method_name(parent) == "to":
                signals.append(const)
            elif isinstance(parent, ast.Assign):
                signals.append(const)
            elif isinstance(parent, ast.IfExp) and const is not parent.test:
                maybe = True  # "cuda" if torch.cuda.is_available() else "cpu"
        if any(not index.is_conditional(s) for s in signals):
            return "always"
        return "maybe" if maybe or signals else None
