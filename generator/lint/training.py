"""Which loops train, and what runs in them: the training-loop facts of
`generator.lint.analysis.Context`, computed on first use.

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
from functools import cached_property

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


def node_position(node: ast.AST) -> tuple[int, int]:
    """(line, column) of ``node``, for sorting nodes in source order."""
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


class TrainingLoops:
    """The training-loop half of `Context` (a mixin: it uses the file's index that `Context`
    builds, through ``self``)."""

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

    def helper_of(self, call: ast.Call) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function of this file that ``call`` runs: ``f(...)`` for a function (or closure)
        named ``f``, ``self.m(...)`` for the method ``m`` of the enclosing class."""
        func = call.func
        if isinstance(func, ast.Name):
            return self.functions.get(func.id)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
        ):
            for anc in self.ancestors(call):
                if isinstance(anc, ast.ClassDef):
                    for stmt in anc.body:
                        if isinstance(stmt, FUNCTIONS) and stmt.name == func.attr:
                            return stmt
                    return None
        return None

    def helper_trains(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether a function makes a training call in its own body (not in a loop of its own,
        which would make it a whole epoch)."""

        def compute() -> bool:
            return any(
                isinstance(n, ast.Call) and self.is_training_call(n) for n in self.own_nodes(func)
            )

        return bool(self.memo("helper", func, compute))

    def trains_step(self, call: ast.Call) -> bool:
        """Whether ``call`` is a training call, itself or through one helper of this file."""
        if self.is_training_call(call):
            return True
        helper = self.helper_of(call)
        return helper is not None and self.helper_trains(helper)

    @cached_property
    def training_loops(self) -> list[ast.For | ast.AsyncFor | ast.While]:
        """Loops whose own body makes a training call (see the module's docstring)."""
        out = []
        for kind in LOOPS:
            for loop in self.by_type[kind]:
                for node in self.own_nodes(loop):
                    if isinstance(node, ast.Call) and self.trains_step(node):
                        out.append(loop)
                        break
        return sorted(out, key=node_position)  # type: ignore[arg-type]

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
        ``scaler.scale(loss).backward()`` and ``accelerator.backward(loss)``; the loss given
        to ``loss_scaler(loss, optimizer)``; the argument a helper of this file passes on to
        its own ``backward()`` (timm's ``_backward(loss)``)."""

        def compute() -> set[str]:
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

        return set(self.memo("loss", loop, compute))

    def _helper_losses(
        self, call: ast.Call, helper: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> set[str]:
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
        out = set()
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

    def in_training_loop(self, node: ast.AST) -> bool:
        loops = set(self.training_loops)
        return any(anc in loops for anc in self.ancestors(node))

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
    def cuda_use(self) -> str | None:
        """How the file puts its training on a CUDA device: ``"always"`` without a condition
        (``.cuda()``, ``torch.device("cuda")``, ``"cuda"`` as a device, ``set_device``, the
        NCCL backend), ``"maybe"`` only under one (``"cuda" if torch.cuda.is_available() else
        "cpu"``, ``if args.cuda: model.cuda()``), None when it does not train or never names
        CUDA."""
        if not self.training_loops or "cuda" not in self.source and "nccl" not in self.source:
            return None
        signals: list[ast.AST] = []
        signals += self.methods("cuda")
        signals += self.calls("torch.cuda.set_device")
        for call in self.calls("torch.device", "torch.distributed.init_process_group"):
            first = call.args[0] if call.args else getattr(kwarg(call, "backend"), "value", None)
            if isinstance(first, ast.Constant) and str(first.value).startswith(("cuda", "nccl")):
                signals.append(call)
        maybe = False
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
            elif isinstance(parent, ast.IfExp) and const is not parent.test:
                maybe = True  # "cuda" if torch.cuda.is_available() else "cpu"
        if any(not self.is_conditional(s) for s in signals):  # type: ignore[attr-defined]
            return "always"
        return "maybe" if maybe or signals else None

    @property
    def trains_on_cuda(self) -> bool:
        """Whether the file trains, and puts its work on a CUDA device without a condition."""
        return self.cuda_use == "always"
