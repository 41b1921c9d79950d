"""Host-device synchronisations on every step of a training loop: `.item()`, copies to the
host, Python numbers and conditions made from tensors, printing tensors, explicit
`torch.cuda.synchronize()`."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule
from generator.lint.rules.steps import (
    TENSOR_TESTS,
    device_values,
    every_step,
    is_loss_value,
)
from generator.lint.syntax import iter_region, method_name, receiver, root_name
from generator.lint.training import Loop, per_node

_SYNCHRONIZE = {
    "torch.cuda.synchronize",
    "torch.accelerator.synchronize",
    "torch.cuda.current_stream",
}


def _device_test(ctx: Context, test: ast.AST) -> bool:
    """Whether an ``if`` tests the device (``if device == "cuda":``, ``if torch.cuda.is_available():``),
    which is the same on every step, so its body still runs every step."""
    for n in ast.walk(test):
        text = (
            n.value if isinstance(n, ast.Constant) else getattr(n, "attr", getattr(n, "id", None))
        )
        if isinstance(text, str) and ("cuda" in text or "device" in text):
            return True
    return False


#: Factories that build a tensor on the host unless given a ``device``.
_HOST_FACTORIES = {
    "torch.tensor",
    "torch.as_tensor",
    "torch.zeros",
    "torch.ones",
    "torch.full",
    "torch.empty",
}


def _host_tensor(ctx: Context, node: ast.AST | None) -> bool:
    """Whether ``node`` is a name only ever assigned a host-built tensor (``torch.tensor(x)``
    with no ``device=``): reading such a tensor copies nothing from a GPU and waits for none.
    A name assigned anything else anywhere in the file is not one."""
    if not isinstance(node, ast.Name):
        return False
    values = ctx.assignments.get(node.id, [])
    return bool(values) and all(
        isinstance(v, ast.Call)
        and ctx.qualname(v.func) in _HOST_FACTORIES
        and not any(k.arg == "device" for k in v.keywords)
        for v in values
    )


def synchronizes(ctx: Context, loop: Loop) -> list[ast.Call]:
    """``torch.cuda.synchronize()`` calls that run on every step of ``loop`` (under an ``if``
    on the device too). A new list on each call."""
    return list(_synchronizes(ctx, loop))


@per_node
def _synchronizes(ctx: Context, loop: Loop) -> list[ast.Call]:
    nodes = list(ctx.loops.step_nodes(loop))
    for node in list(nodes):
        if isinstance(node, ast.If) and _device_test(ctx, node.test):
            nodes += list(iter_region(node.body))
    out = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        q = ctx.qualname(node.func)
        if q in _SYNCHRONIZE - {"torch.cuda.current_stream"}:
            out.append(node)
        elif (
            method_name(node) == "synchronize"
            and isinstance(recv := receiver(node), ast.Call)
            and ctx.qualname(recv.func) == "torch.cuda.current_stream"
        ):
            out.append(node)
    return out


class ItemEveryStep(Rule):
    """`.item()` copies a value from the GPU to the host, so the CPU stops until every
    queued kernel has finished: once per step this serialises the loop. Keep running
    values on the device (`running += loss.detach()`) and read them every N steps. A step
    that has already called `torch.cuda.synchronize()` has paid for the wait: there the
    synchronisation is reported (PTT052), not an `.item()` after it. A tensor built on the
    host (`torch.tensor(flag)` with no `device=`) is not reported: reading it waits for no
    GPU."""

    code = "PTT020"
    name = "item-every-step"
    severity = "warning"
    message = (
        "`.item()` on every step waits for the GPU: accumulate on the device, read every N steps"
    )
    message_zh = "每一步都调用 `.item()`，CPU 要等 GPU：在设备上累加，每 N 步读取一次"
    why_zh = (
        "`.item()` 把一个值从 GPU 拷到主机，CPU 必须停下来，直到排队的所有 kernel 都执行完毕：每步一次，"
        "就让整个循环串行化。把累计值留在设备上（`running += loss.detach()`），每 N 步读取一次。"
        "如果这一步已经调用过 `torch.cuda.synchronize()`，等待已经发生：这时报告的是同步本身"
        "（PTT052），而不是在它之后的 `.item()`。在主机上创建的张量（不带 `device=` 的 `torch.tensor(flag)`）"
        "不会被报告：读取它不需要等待任何 GPU。"
    )
    tip = "avoid-cpu-gpu-syncs"
    VALID = (
        "for step, (x, y) in enumerate(loader):\n    loss = f(x, y)\n    loss.backward()\n"
        "    opt.step()\n    if step % 100 == 0:\n        print(loss.item())\n",
        "for x, y in loader:\n    loss = f(x, y)\n    total += loss.item()\n",
        # the step already waits for the GPU: PTT052 reports the synchronize instead
        "import torch\nfor x, y in loader:\n    loss = f(x, y)\n    loss.backward()\n"
        "    optimizer.step()\n    torch.cuda.synchronize()\n    losses.append(loss.item())\n",
        # a flag built on the host (a preemption stop, reduced by gloo): no GPU to wait for
        "import torch\nfor x, y in loader:\n    loss = f(x, y)\n    loss.backward()\n"
        "    optimizer.step()\n    stop = torch.tensor(float(stop_requested))\n"
        "    dist.all_reduce(stop)\n    if stop.item():\n        break\n",
    )
    INVALID = (
        Invalid(
            "for x, y in loader:\n    loss = f(x, y)\n    loss.backward()\n    optimizer.step()\n"
            "    losses.append(loss.item())\n",
            instead="import torch\nrunning = torch.zeros((), device=device)\n"
            "for step, (x, y) in enumerate(loader):\n    loss = f(x, y)\n    loss.backward()\n"
            "    optimizer.step()\n    running += loss.detach()\n    if step % 100 == 99:\n"
            "        losses.append(running.item() / 100)\n        running.zero_()\n",
        ),
        # the training call hides in a callable given the optimizer (timm, MAE, Swin)
        "for samples, targets in data_loader:\n    loss = criterion(model(samples), targets)\n"
        "    loss_value = loss.item()\n    loss_scaler(loss, optimizer, parameters=model.parameters())\n",
        # ... in a closure, and in a method on self
        "def train_one_epoch(model, loader, optimizer):\n    def _backward(_loss):\n"
        "        _loss.backward()\n        optimizer.step()\n\n    for x, y in loader:\n"
        "        loss = f(model(x), y)\n        _backward(loss)\n        log(loss.item())\n",
        "class Trainer:\n    def _run_batch(self, source, targets):\n        self.optimizer.zero_grad()\n"
        "        loss = f(self.model(source), targets)\n        loss.backward()\n"
        "        self.optimizer.step()\n        return loss\n\n    def _run_epoch(self):\n"
        "        for source, targets in self.train_data:\n"
        "            loss = self._run_batch(source, targets)\n            self.history.append(loss.item())\n",
        # built on the device: its read waits for the GPU like any other
        "import torch\nfor x, y in loader:\n    loss = f(x, y)\n    loss.backward()\n"
        "    optimizer.step()\n    stop = torch.tensor(float(flag), device=device)\n"
        "    dist.all_reduce(stop)\n    if stop.item():\n        break\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for loop, node, _ in every_step(ctx):
            if (
                isinstance(node, ast.Call)
                and method_name(node) == "item"
                and not node.args
                and not _host_tensor(ctx, receiver(node))
                and not any(s.lineno < node.lineno for s in synchronizes(ctx, loop))
            ):
                yield Report(node)


class SynchronizeEveryStep(Rule):
    """`torch.cuda.synchronize()` makes the CPU wait until every kernel queued on the GPU has
    finished. Called on every step, it keeps the CPU from queuing the next step while the GPU
    works, so the GPU idles at the start of each step while Python launches work again; it
    is usually left over from timing each step. Time with CUDA events
    (`torch.cuda.Event(enable_timing=True)`), or synchronise only on the steps you log. An
    `if` on the device (`if device == "cuda":`) still counts as every step."""

    code = "PTT052"
    name = "synchronize-every-step"
    severity = "warning"
    message = "`torch.cuda.synchronize()` on every step stalls the host until the GPU is idle: time with CUDA events, or synchronise only on the steps you log"
    message_zh = "每一步都调用 `torch.cuda.synchronize()`，主机要等到 GPU 完全空闲：计时请用 CUDA 事件，或者只在记录日志的步骤同步"
    why_zh = (
        "`torch.cuda.synchronize()` 让 CPU 一直等到 GPU 上排队的所有 kernel 都执行完毕。每一步都调用，"
        "CPU 就无法在 GPU 计算的同时提前提交下一步，每一步开头 GPU 都要空等 Python 重新发射 kernel；"
        "它通常是为了给每一步计时而留下的。计时请用 CUDA 事件（`torch.cuda.Event(enable_timing=True)`），"
        '或者只在记录日志的那些步骤同步。对设备的 `if` 判断（`if device == "cuda":`）仍算作每一步。'
    )
    tip = "avoid-cpu-gpu-syncs"
    VALID = (
        "import torch\nfor step, (x, y) in enumerate(loader):\n    f(model(x), y).backward()\n"
        "    optimizer.step()\n    if step % 100 == 0:\n        torch.cuda.synchronize()\n"
        "        log(time.time() - t0)\n",
        "import torch\nfor x, y in loader:\n    f(model(x), y).backward()\n    optimizer.step()\n"
        "torch.cuda.synchronize()\n",
    )
    INVALID = (
        Invalid(
            "import time\nimport torch\nfor x, y in loader:\n    t0 = time.time()\n"
            "    loss = f(model(x), y)\n    loss.backward()\n    optimizer.step()\n"
            "    torch.cuda.synchronize()\n    print(f'step took {time.time() - t0:.3f}s')\n",
            instead="import torch\nstart = torch.cuda.Event(enable_timing=True)\n"
            "end = torch.cuda.Event(enable_timing=True)\nfor step, (x, y) in enumerate(loader):\n"
            "    start.record()\n    loss = f(model(x), y)\n    loss.backward()\n"
            "    optimizer.step()\n    end.record()\n    if step % 100 == 0:\n"
            "        end.synchronize()  # waits for this step only, on logging steps\n"
            "        print(f'step took {start.elapsed_time(end):.1f} ms')\n",
        ),
        "import torch\nfor step in range(num_steps):\n    loss = model(x, y)\n    loss.backward()\n"
        "    optimizer.step()\n    if device == 'cuda':\n        torch.cuda.synchronize()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for loop in ctx.loops.training_loops:
            yield from (Report(call) for call in synchronizes(ctx, loop))


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
    message_zh = "每一步都调用 `.cpu()`/`.tolist()`/`.numpy()`，CPU 要等 GPU：每 N 步拷贝一次"
    why_zh = (
        "`.cpu()`、`.numpy()` 和 `.tolist()` 把张量拷到主机，并等待 GPU 算到这里：每一步都这样做，整个"
        "循环就被串行化。把张量留在设备上，每 N 步（或者在 epoch 结束时）拷贝一次。只针对损失、模型输出"
        "和循环自己搬到设备上的张量（直接来自 `DataLoader` 的批次仍在主机上）。"
    )
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
        for loop in ctx.loops.training_loops:
            on_device = device_values(ctx, loop)
            for node in ctx.loops.step_nodes(loop):
                if (
                    isinstance(node, ast.Call)
                    and method_name(node) in {"cpu", "tolist", "numpy"}
                    and not node.args
                    and root_name(receiver(node)) in on_device
                ):
                    yield Report(node)


class PythonScalarEveryStep(Rule):
    """`float(loss)` and `int(loss)` convert a tensor to a Python number, which waits for
    the GPU exactly like `.item()`: once per step this serialises the loop."""

    code = "PTT022"
    name = "python-scalar-every-step"
    severity = "warning"
    message = "`float()`/`int()` of the loss on every step waits for the GPU: read it every N steps"
    message_zh = "每一步都对损失调用 `float()`/`int()`，CPU 要等 GPU：每 N 步读取一次"
    why_zh = (
        "`float(loss)` 和 `int(loss)` 把张量转换成 Python 数值，和 `.item()` 一样要等 GPU：每步一次，"
        "就让整个循环串行化。"
    )
    tip = "avoid-cpu-gpu-syncs"
    VALID = ("for x in data:\n    loss = f(x)\n    loss.backward()\n    n = int(len(x))\n",)
    INVALID = (
        Invalid(
            "for x in data:\n    loss = f(x)\n    loss.backward()\n    history.append(float(loss))\n",
            instead="import torch\nfor x in data:\n    loss = f(x)\n    loss.backward()\n"
            "    history.append(loss.detach())\nhistory = torch.stack(history).tolist()\n",
        ),
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for _, node, losses in every_step(ctx):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"float", "int", "bool"}
                and node.func.id not in ctx.functions
                and len(node.args) == 1
                and is_loss_value(node.args[0], losses)
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
    message_zh = "每一步都打印损失张量，CPU 要等 GPU：每 N 步打印一次"
    why_zh = (
        "打印张量（或在 f-string 中格式化它）要在主机端读取它的数值，这需要等待 GPU：每一步都这样做，"
        "整个循环就被串行化。每 N 步打印一次，打印的是拷贝一次得到的值。"
    )
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
        for _, node, losses in every_step(ctx):
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
            if any(is_loss_value(v, losses) for v in values):
                yield Report(node)


class TensorConditionEveryStep(Rule):
    """A Python `if` (or `assert`) on a tensor, such as `if torch.isnan(loss):`, needs its
    value on the host, so the CPU waits for the GPU on every step. Accumulate a flag on the
    device (`bad |= ~torch.isfinite(loss)`) and check it every N steps. Reading metadata
    (`loss.dtype`, `loss.shape`, `loss.device`, `loss.size()`) needs no sync and is not
    reported."""

    code = "PTT024"
    name = "tensor-condition-every-step"
    severity = "warning"
    message = "a Python `if` on a tensor waits for the GPU on every step: check a device-side flag every N steps"
    message_zh = (
        "每一步都对张量做 Python `if` 判断，CPU 要等 GPU：在设备上累积标志位，每 N 步检查一次"
    )
    why_zh = (
        "对张量做 Python `if`（或 `assert`）判断，例如 `if torch.isnan(loss):`，需要把它的值拿到主机端，"
        "所以每一步 CPU 都要等 GPU。在设备上累积一个标志位（`bad |= ~torch.isfinite(loss)`），每 N 步"
        "检查一次。读取元数据（`loss.dtype`、`loss.shape`、`loss.device`、`loss.size()`）不需要同步，"
        "不会报告。"
    )
    tip = "avoid-cpu-gpu-syncs"
    VALID = (
        "import torch\nfor x in data:\n    loss = f(x)\n    loss.backward()\n"
        "    bad |= ~torch.isfinite(loss.detach())\n",
        # metadata lives on the host
        "import torch\nfor x in data:\n    loss = f(x)\n    assert loss.dtype is torch.float32\n"
        "    if loss.shape != () or loss.requires_grad is False:\n        raise ValueError(loss.shape)\n"
        "    loss.backward()\n",
    )
    INVALID = (
        "import torch\nfor x in data:\n    loss = f(x)\n    if torch.isnan(loss):\n"
        "        raise RuntimeError('nan')\n    loss.backward()\n",
        "for x in data:\n    loss = f(x)\n    loss.backward()\n    if loss < best:\n        best = loss\n",
        "import torch\nfor x in data:\n    loss = f(x)\n    loss.backward()\n"
        "    assert torch.isfinite(loss).all()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for _, node, losses in every_step(ctx):
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
                is_loss_value(v, losses)
                for v in [test.left, *test.comparators]
                if not isinstance(v, ast.Constant | ast.Call)
            )
        if isinstance(test, ast.Call):
            if ctx.qualname(test.func) in TENSOR_TESTS:
                return True
            return method_name(test) in {"any", "all"} and (
                is_loss_value(receiver(test), losses)
                or any(
                    isinstance(n, ast.Call) and ctx.qualname(n.func) in TENSOR_TESTS
                    for n in ast.walk(test)
                )
            )
        return is_loss_value(test, losses) and isinstance(test, ast.Name)
