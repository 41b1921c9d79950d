"""Which loops train, and what runs in them: the training-loop facts of
`generator.lint.analysis.Context`, computed on first use.

A loop trains when it runs a backward pass or an optimizer step (directly, or through a
function of the same file it calls: `TrainingLoops.trains`). Its *step nodes* run every
iteration; the names its backward passes take are its losses.
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
