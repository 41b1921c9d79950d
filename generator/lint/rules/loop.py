"""What a training loop does on every step.

A training loop is a ``for``/``while`` loop whose own body calls ``backward()`` or an
optimizer's ``step()``; "every step" leaves out what runs under an ``if`` (logging every N
steps is fine) and in exception handlers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Report, Rule
from generator.lint.syntax import iter_region, method_name, receiver, root_name

_TO_HOST = {"item", "tolist", "cpu", "numpy"}
_CONVERTED = {"item", "tolist", "detach", "numpy"}
_TENSOR_TESTS = {
    "torch.isnan",
    "torch.isinf",
    "torch.isfinite",
    "torch.any",
    "torch.all",
    "torch.equal",
    "torch.allclose",
}


def _every_step(ctx: Context) -> Iterator[tuple[ast.AST, ast.AST, set[str]]]:
    """(loop, node, loss names) for every node that runs on every step of a training loop."""
    for loop in ctx.training_loops:
        losses = ctx.loss_names(loop)
        for node in ctx.step_nodes(loop):
            yield loop, node, losses


def _is_loss_value(node: ast.AST, losses: set[str]) -> bool:
    """``loss``, or a chain on it that is still a tensor (``loss.mean()``, ``loss[0]``)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id in losses
        if isinstance(node, ast.Call):
            if method_name(node) in _CONVERTED:
                return False
            node = node.func
        elif isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        else:
            return False


class ItemEveryStep(Rule):
    """`.item()` copies a value from the GPU to the host, so the CPU stops until every
    queued kernel has finished: once per step this serialises the loop. Keep running
    values on the device (`running += loss.detach()`) and read them every N steps."""

    code = "PTT020"
    name = "item-every-step"
    severity = "warning"
    message = (
        "`.item()` on every step waits for the GPU: accumulate on the device, read every N steps"
    )
    tip = "avoid-cpu-gpu-syncs"
    VALID = (
        "for step, (x, y) in enumerate(loader):\n    loss = f(x, y)\n    loss.backward()\n"
        "    opt.step()\n    if step % 100 == 0:\n        print(loss.item())\n",
        "for x, y in loader:\n    loss = f(x, y)\n    total += loss.item()\n",
    )
    INVALID = (
        "for x, y in loader:\n    loss = f(x, y)\n    loss.backward()\n    optimizer.step()\n"
        "    losses.append(loss.item())\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for _, node, _ in _every_step(ctx):
            if isinstance(node, ast.Call) and method_name(node) == "item" and not node.args:
                yield Report(node)


def _device_values(ctx: Context, loop: ast.AST) -> set[str]:
    """Names a training loop binds to values on the device: the loss, model outputs, what
    it moves with ``.to()``/``.cuda()``, and what it computes from those."""
    names = ctx.loss_names(loop) | _outputs(ctx, loop)
    assigns = [n for n in ctx.all_nodes(loop) if isinstance(n, ast.Assign)]
    for _ in range(3):
        for node in assigns:
            if any(
                (isinstance(x, ast.Name) and x.id in names)
                or (isinstance(x, ast.Call) and method_name(x) in {"to", "cuda"})
                for x in ast.walk(node.value)
            ):
                for target in node.targets:
                    elts = target.elts if isinstance(target, ast.Tuple) else [target]
                    names |= {e.id for e in elts if isinstance(e, ast.Name)}
    return names


class HostCopyEveryStep(Rule):
    """`.cpu()`, `.numpy()` and `.tolist()` copy a tensor to the host and wait for the GPU
    to get there: on every step that serialises the loop. Keep tensors on the device and
    copy once every N steps (or at the end of the epoch). Reported for the loss, model
    outputs and tensors the loop moved to the device (batches straight from a
    `DataLoader` are still on the host)."""

    code = "PTT021"
    name = "host-copy-every-step"
    severity = "warning"
    message = "`.cpu()`/`.tolist()`/`.numpy()` on every step waits for the GPU: copy every N steps"
    tip = "avoid-cpu-gpu-syncs"
    VALID = (
        "for x, y in loader:\n    out = model(x)\n    loss = f(out, y)\n    loss.backward()\n"
        "    opt.step()\n    preds.append(out.argmax(1))\nall_preds = torch.cat(preds).cpu()\n",
        "for x, index in loader:\n    loss = model(x).mean()\n    loss.backward()\n"
        "    seen.append(index.tolist())\n",
    )
    INVALID = (
        "for x, y in loader:\n    out = model(x)\n    loss = f(out, y)\n    loss.backward()\n"
        "    opt.step()\n    preds.extend(out.argmax(1).cpu().numpy())\n",
        "while step < n:\n    loss = f(x)\n    loss.backward()\n    log(loss.detach().tolist())\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for loop in ctx.training_loops:
            on_device = _device_values(ctx, loop)
            for node in ctx.step_nodes(loop):
                if (
                    isinstance(node, ast.Call)
                    and method_name(node) in {"cpu", "tolist", "numpy"}
                    and not node.args
                    and root_name(receiver(node)) in on_device  # type: ignore[arg-type]
                ):
                    yield Report(node)


class PythonScalarEveryStep(Rule):
    """`float(loss)` and `int(loss)` convert a tensor to a Python number, which waits for
    the GPU exactly like `.item()`: once per step this serialises the loop."""

    code = "PTT022"
    name = "python-scalar-every-step"
    severity = "warning"
    message = "`float()`/`int()` of the loss on every step waits for the GPU: read it every N steps"
    tip = "avoid-cpu-gpu-syncs"
    VALID = ("for x in data:\n    loss = f(x)\n    loss.backward()\n    n = int(len(x))\n",)
    INVALID = (
        "for x in data:\n    loss = f(x)\n    loss.backward()\n    history.append(float(loss))\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for _, node, losses in _every_step(ctx):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"float", "int", "bool"}
                and node.func.id not in ctx.functions
                and len(node.args) == 1
                and _is_loss_value(node.args[0], losses)
            ):
                yield Report(node)


class PrintTensorEveryStep(Rule):
    """Printing a tensor (or formatting it in an f-string) reads its value on the host,
    which waits for the GPU: every step, that serialises the loop. Print every N steps,
    from a value copied once."""

    code = "PTT023"
    name = "print-tensor-every-step"
    severity = "warning"
    message = "printing the loss tensor on every step waits for the GPU: print every N steps"
    tip = "avoid-cpu-gpu-syncs"
    VALID = (
        "for step, x in enumerate(data):\n    loss = f(x)\n    loss.backward()\n"
        "    if step % 50 == 0:\n        print(f'loss {loss:.4f}')\n",
        "for x in data:\n    loss = f(x)\n    loss.backward()\n    print('step done')\n",
    )
    INVALID = (
        "for x in data:\n    loss = f(x)\n    loss.backward()\n    print('loss', loss)\n",
        "for x in data:\n    loss = f(x)\n    loss.backward()\n    print(f'loss {loss:.4f}')\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for _, node, losses in _every_step(ctx):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "print"
            ):
                continue
            values: list[ast.AST] = []
            for arg in node.args:
                if isinstance(arg, ast.JoinedStr):
                    values += [v.value for v in arg.values if isinstance(v, ast.FormattedValue)]
                else:
                    values.append(arg)
            if any(_is_loss_value(v, losses) for v in values):
                yield Report(node)


class TensorConditionEveryStep(Rule):
    """A Python `if` (or `assert`) on a tensor, such as `if torch.isnan(loss):`, needs its
    value on the host, so the CPU waits for the GPU on every step. Accumulate a flag on the
    device (`bad |= ~torch.isfinite(loss)`) and check it every N steps."""

    code = "PTT024"
    name = "tensor-condition-every-step"
    severity = "warning"
    message = "a Python `if` on a tensor waits for the GPU on every step: check a device-side flag every N steps"
    tip = "avoid-cpu-gpu-syncs"
    VALID = (
        "import torch\nfor x in data:\n    loss = f(x)\n    loss.backward()\n"
        "    bad |= ~torch.isfinite(loss.detach())\n",
    )
    INVALID = (
        "import torch\nfor x in data:\n    loss = f(x)\n    if torch.isnan(loss):\n"
        "        raise RuntimeError('nan')\n    loss.backward()\n",
        "for x in data:\n    loss = f(x)\n    loss.backward()\n    if loss < best:\n        best = loss\n",
        "import torch\nfor x in data:\n    loss = f(x)\n    loss.backward()\n"
        "    assert torch.isfinite(loss).all()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for _, node, losses in _every_step(ctx):
            if isinstance(node, ast.If | ast.While | ast.Assert) and self._on_tensor(
                ctx, node.test, losses
            ):
                yield Report(node.test)

    def _on_tensor(self, ctx: Context, test: ast.AST, losses: set[str]) -> bool:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._on_tensor(ctx, test.operand, losses)
        if isinstance(test, ast.BoolOp):
            return any(self._on_tensor(ctx, v, losses) for v in test.values)
        if isinstance(test, ast.Compare):
            return any(
                _is_loss_value(v, losses)
                for v in [test.left, *test.comparators]
                if not isinstance(v, ast.Constant | ast.Call)
            )
        if isinstance(test, ast.Call):
            if ctx.qualname(test.func) in _TENSOR_TESTS:
                return True
            return method_name(test) in {"any", "all"} and (
                _is_loss_value(receiver(test), losses)  # type: ignore[arg-type]
                or any(
                    isinstance(n, ast.Call) and ctx.qualname(n.func) in _TENSOR_TESTS
                    for n in ast.walk(test)
                )
            )
        return _is_loss_value(test, losses) and isinstance(test, ast.Name)


def _outputs(ctx: Context, loop: ast.AST) -> set[str]:
    """Names a loop assigns from calling a model (``out = model(x)``)."""
    out = set()
    for node in ctx.all_nodes(loop):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and ctx.name_is_module(node.value.func)
        ):
            for target in node.targets:
                elts = target.elts if isinstance(target, ast.Tuple) else [target]
                out |= {e.id for e in elts if isinstance(e, ast.Name)}
    return out


def _feeds_backward(ctx: Context, node: ast.AST, name: str) -> bool:
    """Whether ``name`` is used, in ``node``'s scope, to compute what ``backward()`` gets
    (directly, or through one assignment: ``total = sum(losses); total.backward()``)."""
    body = ctx.scope_body(node)
    receivers: list[ast.AST] = []
    for n in iter_region(body, conditional=True):
        if isinstance(n, ast.Call) and ctx.is_backward(n):
            recv = receiver(n)
            receivers += [recv, *n.args] if recv is not None else list(n.args)
    names = {r.id for r in receivers if isinstance(r, ast.Name)}
    values = [
        n.value
        for n in iter_region(body, conditional=True)
        if isinstance(n, ast.Assign | ast.AugAssign)
        and any(
            isinstance(t, ast.Name) and t.id in names
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        )
    ]
    return any(
        isinstance(x, ast.Name) and x.id == name for r in [*receivers, *values] for x in ast.walk(r)
    )


class LossKeptWithGraph(Rule):
    """A loss (or model output) kept across steps keeps its whole autograd graph alive:
    appending it to a list, or summing it with `+=`, holds every step's activations until
    the container goes away, and `total += loss` chains the graphs together. Keep
    `loss.detach()` (still on the device) or `loss.item()` (a Python number)."""

    code = "PTT025"
    name = "loss-kept-with-graph"
    severity = "warning"
    message = "loss or output kept across steps with its graph: keep `.detach()` (or `.item()`)"
    tip = "detach-summary-statistics"
    VALID = (
        "for x, y in data:\n    loss = f(model(x), y)\n    loss.backward()\n"
        "    running += loss.detach()\n    losses.append(loss.detach())\n",
        "for x in micro_batches:\n    loss = f(x)\n    total += loss\n"
        "    if last:\n        total.backward()\n",
        "import torch\nfor x in data:\n    loss = f(x)\n    losses.append(loss)\n"
        "    torch.stack(losses).sum().backward()\n",
    )
    INVALID = (
        "for x, y in data:\n    loss = f(model(x), y)\n    loss.backward()\n"
        "    optimizer.step()\n    total_loss += loss\n",
        "for x, y in data:\n    loss = f(model(x), y)\n    loss.backward()\n    losses.append(loss)\n",
        "for x, y in data:\n    out = model(x)\n    f(out, y).backward()\n    outputs.append(out)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for loop in ctx.training_loops:
            kept = ctx.loss_names(loop) | _outputs(ctx, loop)
            if not kept:
                continue
            for node in ctx.all_nodes(loop):
                if (
                    isinstance(node, ast.Call)
                    and method_name(node) == "append"
                    and len(node.args) == 1
                    and isinstance(node.args[0], ast.Name)
                    and node.args[0].id in kept
                ):
                    container = root_name(receiver(node))  # type: ignore[arg-type]
                    if container and not _feeds_backward(ctx, loop, container):
                        yield Report(node)
                elif (
                    isinstance(node, ast.AugAssign)
                    and isinstance(node.op, ast.Add)
                    and isinstance(node.target, ast.Name | ast.Attribute)
                    and not (isinstance(node.target, ast.Name) and node.target.id in kept)
                    and any(_is_loss_value(v, kept) for v in self._terms(node.value))
                ):
                    target = root_name(node.target)
                    if target and not _feeds_backward(ctx, loop, target):
                        yield Report(node)

    @staticmethod
    def _terms(node: ast.AST) -> list[ast.AST]:
        if isinstance(node, ast.BinOp) and isinstance(
            node.op, ast.Add | ast.Sub | ast.Mult | ast.Div
        ):
            return [*LossKeptWithGraph._terms(node.left), *LossKeptWithGraph._terms(node.right)]
        return [node]


class EmptyCacheInLoop(Rule):
    """`torch.cuda.empty_cache()` frees no memory that tensors still use; it hands the
    allocator's cached blocks back to the driver, which the next step then has to request
    again with slow `cudaMalloc` calls. In a training loop it only costs time."""

    code = "PTT028"
    name = "empty-cache-in-loop"
    severity = "warning"
    message = "`torch.cuda.empty_cache()` in the training loop frees nothing in use and slows the next step"
    tip = "free-memory-empty-cache"
    VALID = (
        "import torch\nfor x in data:\n    f(x).backward()\n    opt.step()\n"
        "del model\ntorch.cuda.empty_cache()\n",
    )
    INVALID = (
        "import torch\nfor x in data:\n    f(x).backward()\n    opt.step()\n"
        "    torch.cuda.empty_cache()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for _, node, _ in _every_step(ctx):
            if isinstance(node, ast.Call) and ctx.qualname(node.func) in {
                "torch.cuda.empty_cache",
                "torch.cuda.memory.empty_cache",
            }:
                yield Report(node)


class MetricItemInEvalLoop(Rule):
    """In an evaluation loop, `correct += (pred == y).sum().item()` copies to the host and
    waits for the GPU on every batch. Sum on the device (`correct += (pred == y).sum()`)
    and convert once after the loop."""

    code = "PTT036"
    name = "metric-item-in-eval-loop"
    severity = "warning"
    message = (
        "metric summed with `.item()` on every evaluation batch: sum on the device, convert once"
    )
    tip = "track-metrics-on-device"
    VALID = (
        "import torch\n\n@torch.inference_mode()\ndef evaluate(model, loader):\n"
        "    correct = 0\n    for x, y in loader:\n        correct += (model(x).argmax(1) == y).sum()\n"
        "    return correct.item()\n",
    )
    INVALID = (
        "import torch\n\n@torch.no_grad()\ndef evaluate(model, loader):\n"
        "    correct = 0\n    for x, y in loader:\n"
        "        correct += (model(x).argmax(1) == y).sum().item()\n    return correct\n",
        "import torch\nwith torch.inference_mode():\n    for x, y in loader:\n"
        "        total_loss += f(model(x), y).item() * len(x)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        training = set(ctx.training_loops)
        for kind in (ast.For, ast.While):
            for loop in ctx.by_type[kind]:
                if loop in training or not ctx.in_no_grad(loop):
                    continue
                for node in iter_region(loop.body):  # type: ignore[attr-defined]
                    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
                        for term in LossKeptWithGraph._terms(node.value):
                            if isinstance(term, ast.Call) and method_name(term) == "item":
                                yield Report(term)
