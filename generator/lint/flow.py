"""Control flow inside a loop and flags whose value the file states: `StepFlow`, computed once
per file (``ctx.flow`` of `generator.lint.analysis.Context`).

A statement under an ``if`` in a training loop's body still runs on every step when the ``if``
is a *step guard* (its body steps the optimizer: ``if (i + 1) % accum == 0:``) or tests
something that does not change from one step to the next the way a counter does: a flag
(``if args.fp16:``), the rank (``if rank == 0:``), the device, a state (``if not
is_overflow:``), or a counter passing a threshold for good (``if step > warmup:``). It runs
only on some steps when the test is periodic (``% N``), reaches a counter's value once or
for a while (``i == 0``, ``i < 10``, ``epoch in milestones``), draws a random number, or
reads a tensor's value (the test itself then waits for the GPU). The ``else`` of a test
that is true on some steps only (``i == 0``, ``i % N == 0``) runs on the others, so on
every step for the rules' purposes.

A flag tested with its literal default stated in the file (`generator.lint.flags`) decides
it: ``if args.verbose:`` with ``action="store_true"`` runs on no step by default.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Literal

from generator.lint.syntax import LOOPS, SCOPES, method_name
from generator.lint.training import Loop, per_node

if TYPE_CHECKING:
    from generator.lint.analysis import Context

#: How often the body (or the ``else``) of an ``if`` in a loop runs.
Frequency = Literal["every", "some"]
_RANDOM = (
    "random.",
    "numpy.random.",
    "torch.rand",
    "torch.randn",
    "torch.randint",
    "torch.bernoulli",
)
#: Comparisons of a counter that hold for a finite stretch of steps (counter on the left).
_FINITE = (ast.Eq, ast.Lt, ast.LtE, ast.In, ast.Is)
#: Methods that read a tensor's value in a test (``x.any()``, ``x.item() > 0``...).
_VALUE_METHODS = {"item", "any", "all", "sum", "mean", "max", "min", "norm"}


class StepFlow:
    """Guards and flags of one file (``ctx.flow``)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    # --- counters and guards ------------------------------------------------------------

    @per_node
    def counters(self, loop: Loop) -> frozenset[str]:
        """Names that count iterations of ``loop``: its target, names incremented in it
        (``step += 1``), and names computed from those (``ni = i + nb * epoch``)."""
        out: set[str] = set()
        if isinstance(loop, ast.For | ast.AsyncFor):
            out |= {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
        assigns: list[ast.Assign] = []
        for node in self.ctx.loops.all_nodes(loop):
            if (
                isinstance(node, ast.AugAssign)
                and isinstance(node.op, ast.Add | ast.Sub)
                and isinstance(node.target, ast.Name)
                and isinstance(node.value, ast.Constant | ast.Name | ast.Attribute)
            ):
                out.add(node.target.id)
            elif isinstance(node, ast.Assign):
                assigns.append(node)
        if isinstance(loop, ast.While):
            out |= {n.id for n in ast.walk(loop.test) if isinstance(n, ast.Name)} & self._bumped(
                loop
            )
        for node in assigns:
            if _names(node.value) & out and not _periodic(node.value):
                out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        return frozenset(out)

    @per_node
    def _periodic_names(self, loop: Loop) -> frozenset[str]:
        """Names ``loop`` binds to a test of its counters (``is_log_step = step % 50 == 0``)."""
        counters = self.counters(loop)
        out: set[str] = set()
        for node in self.ctx.loops.all_nodes(loop):
            if (
                isinstance(node, ast.Assign)
                and _periodic(node.value)
                and _names(node.value) & (counters | out)
            ):
                out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        return frozenset(out)

    @per_node
    def _assigned(self, loop: Loop) -> frozenset[str]:
        """Names ``loop`` binds (its own computations: a test on one depends on the data)."""
        out: set[str] = set()
        for node in self.ctx.loops.all_nodes(loop):
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    elts = t.elts if isinstance(t, ast.Tuple | ast.List) else [t]
                    out |= {e.id for e in elts if isinstance(e, ast.Name)}
            elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                out.add(node.target.id)
        return frozenset(out)

    def _holds_by_default(self, test: ast.AST) -> bool | None:
        """Whether a test of a flag holds with the flag's literal default (``if
        args.verbose:`` with ``action="store_true"``: no; ``if args.mode == "hooks":`` with
        ``default="hooks"``: yes); None when the test is not such a test."""
        negate = False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            negate, test = True, test.operand
        default = self.ctx.flags.default(test)
        if default is not None:
            return bool(default.value) != negate
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq | ast.NotEq)
            and isinstance(test.comparators[0], ast.Constant)
            and (default := self.ctx.flags.default(test.left)) is not None
        ):
            equal = default.value == test.comparators[0].value
            return (equal if isinstance(test.ops[0], ast.Eq) else not equal) != negate
        return None

    def _bumped(self, loop: Loop) -> set[str]:
        return {
            n.target.id
            for n in self.ctx.loops.all_nodes(loop)
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
        }

    @per_node
    def _random_names(self, loop: Loop) -> frozenset[str]:
        """Names ``loop`` assigns from a random draw (``r = np.random.rand(1)``)."""
        out = set()
        for node in self.ctx.loops.all_nodes(loop):
            if isinstance(node, ast.Assign) and self._draws(node.value):
                out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        return frozenset(out)

    def _draws(self, expr: ast.AST) -> bool:
        return any(
            isinstance(n, ast.Call) and (self.ctx.qualname(n.func) or "").startswith(_RANDOM)
            for n in ast.walk(expr)
        )

    def frequency(self, loop: Loop, node: ast.If, tensors: set[str]) -> tuple[Frequency, Frequency]:
        """How often the body and the ``else`` of ``node`` (an ``if`` in ``loop``) run, given
        the names that hold tensors (a test that reads one depends on the data)."""
        if self._steps(loop, node.body):
            return "every", "some"  # a step guard: the body runs on every optimizer step
        if node.orelse and isinstance(node.orelse[-1], ast.Break | ast.Return | ast.Raise):
            return "every", "some"  # `if i < n: ... else: break`: every step that runs
        return self.test_frequency(loop, node.test, tensors, bool(node.orelse))

    def test_frequency(
        self, loop: Loop, test: ast.AST, tensors: set[str], has_else: bool
    ) -> tuple[Frequency, Frequency]:
        """How often the two branches of a test in ``loop`` run (an ``if`` statement or a
        conditional expression)."""
        if self._reads_value(test, tensors) or self._draws(test):
            return "some", "some"
        if _names(test) & self._random_names(loop):
            return "some", "some"
        counters = self.counters(loop)
        if _names(test) & self._periodic_names(loop):
            return "some", "some"  # `if is_log_step:`
        if (_names(test) & self._assigned(loop)) - counters:
            return "some", "some"  # a value the loop computes (`if not math.isfinite(loss_value):`)
        if (holds := self._holds_by_default(test)) is not None:
            on: Frequency = "every" if holds else "some"
            off: Frequency = "some" if holds else "every"
            return on, (off if has_else else "some")
        periodic = any(
            isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(test)
        )
        finite = periodic or self._finite(test, counters)
        if not finite:
            return "every", "every"  # a flag, the rank, a state, a threshold passed for good
        # ``i == 0``/``i % N == 0`` holds on some steps; its ``else`` runs on the others
        inverse = isinstance(test, ast.Compare) and all(isinstance(o, ast.Eq) for o in test.ops)
        return "some", ("every" if inverse and has_else else "some")

    def _steps(self, loop: Loop, body: list[ast.stmt]) -> bool:
        """Whether ``body`` steps an optimizer that the loop steps nowhere else on every
        iteration: the accumulation guard, not an extra periodic step (a lazy regulariser)."""
        loops = self.ctx.loops
        stepped = {
            ast.unparse(n.func.value)
            for n in _own(body)
            if isinstance(n, ast.Call)
            and loops.is_optimizer_step(n)
            and isinstance(n.func, ast.Attribute)
        }
        if not stepped:
            return False
        always = {
            ast.unparse(n.func.value)
            for n in loops.step_nodes(loop)
            if isinstance(n, ast.Call)
            and loops.is_optimizer_step(n)
            and isinstance(n.func, ast.Attribute)
        }
        return not stepped <= always

    def _finite(self, test: ast.AST, counters: frozenset[str]) -> bool:
        for node in ast.walk(test):
            if not isinstance(node, ast.Compare):
                continue
            left = node.left
            for op, right in zip(node.ops, node.comparators, strict=False):
                if _names(left) & counters and isinstance(op, _FINITE):
                    return True
                if _names(right) & counters and isinstance(op, ast.Eq | ast.Gt | ast.GtE):
                    return True  # 10 > i: i < 10
                left = right
        return False

    def _reads_value(self, test: ast.AST, tensors: set[str]) -> bool:
        """Whether a test reads a tensor's value (``loss < best``, ``x.sum() == 0``)."""
        for node in ast.walk(test):
            if isinstance(node, ast.Call) and method_name(node) in _VALUE_METHODS:
                return True
            if isinstance(node, ast.Name) and node.id in tensors:
                parent = self.ctx.parent(node)
                if not (isinstance(parent, ast.Attribute) and parent.value is node):
                    return True  # `loss.dtype`, `x.shape` are metadata
        return False

    def every_step(
        self,
        loop: Loop,
        tensors: set[str],
        skip: Callable[[ast.stmt], bool] | None = None,
    ) -> Iterator[tuple[ast.AST, bool]]:
        """Each node of ``loop``'s body (nested loops included, nested scopes not, nor the
        nested loops ``skip`` names) with whether it runs on every step: under guards that
        do (see the module's docstring), outside exception handlers."""
        yield from self._walk(loop, list(loop.body), True, tensors, skip)

    def _walk(
        self,
        loop: Loop,
        stmts: list[ast.stmt],
        every: bool,
        tensors: set[str],
        skip: Callable[[ast.stmt], bool] | None,
    ) -> Iterator[tuple[ast.AST, bool]]:
        for stmt in stmts:
            if isinstance(stmt, LOOPS) and skip is not None and skip(stmt):
                continue
            if isinstance(stmt, ast.If):
                yield stmt, every
                yield from self._exprs(loop, stmt.test, every, tensors)
                body, orelse = self.frequency(loop, stmt, tensors)
                yield from self._walk(loop, stmt.body, every and body == "every", tensors, skip)
                yield from self._walk(loop, stmt.orelse, every and orelse == "every", tensors, skip)
            elif isinstance(stmt, ast.Try | ast.TryStar):
                yield stmt, every
                yield from self._walk(
                    loop, [*stmt.body, *stmt.orelse, *stmt.finalbody], every, tensors, skip
                )
                for handler in stmt.handlers:
                    yield from self._walk(loop, handler.body, False, tensors, skip)
            elif isinstance(stmt, ast.Match):
                yield stmt, every
                yield from self._exprs(loop, stmt.subject, every, tensors)
                for case in stmt.cases:
                    yield from self._walk(loop, case.body, False, tensors, skip)
            elif isinstance(stmt, SCOPES):
                yield stmt, every
            elif isinstance(stmt, (*LOOPS, ast.With, ast.AsyncWith)):
                yield stmt, every
                for child in ast.iter_child_nodes(stmt):
                    if isinstance(child, ast.stmt):
                        continue
                    yield from self._exprs(loop, child, every, tensors)
                yield from self._walk(loop, stmt.body, every, tensors, skip)
                yield from self._walk(loop, getattr(stmt, "orelse", []), every, tensors, skip)
            else:
                yield from self._exprs(loop, stmt, every, tensors)

    def _exprs(
        self, loop: Loop, node: ast.AST, every: bool, tensors: set[str]
    ) -> Iterator[tuple[ast.AST, bool]]:
        """``node`` and what it holds (not nested scopes), the branches of a conditional
        expression as often as its test says."""
        stack: list[tuple[ast.AST, bool]] = [(node, every)]
        while stack:
            current, now = stack.pop()
            yield current, now
            if isinstance(current, ast.Lambda):
                continue
            if isinstance(current, ast.IfExp):
                body, orelse = self.test_frequency(loop, current.test, tensors, True)
                stack.append((current.orelse, now and orelse == "every"))
                stack.append((current.body, now and body == "every"))
                stack.append((current.test, now))
                continue
            stack.extend((c, now) for c in reversed(list(ast.iter_child_nodes(current))))


def _periodic(node: ast.AST) -> bool:
    """Whether an expression tests something (a modulo, a comparison): a flag, not a count."""
    return any(
        isinstance(n, ast.Compare) or (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod))
        for n in ast.walk(node)
    )


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _own(stmts: list[ast.stmt]) -> Iterator[ast.AST]:
    """Nodes of ``stmts`` outside nested scopes and loops."""
    stack: list[ast.AST] = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*SCOPES, *LOOPS)):
            continue
        stack.extend(ast.iter_child_nodes(node))
