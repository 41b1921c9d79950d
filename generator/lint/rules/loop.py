"""What a training loop keeps across steps or does on every step besides syncing, and the
metrics of evaluation loops.

A training loop is a ``for``/``while`` loop whose own body makes a training call (see
`generator.lint.training`); "every step" leaves out what runs under an ``if`` (logging every
N steps is fine) and in exception handlers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule
from generator.lint.rules.devices import host_value
from generator.lint.rules.steps import every_step, feeds_backward, is_loss_value, outputs
from generator.lint.rules.sync_sites import sites
from generator.lint.syntax import LOOPS, SCOPES, iter_region, method_name, receiver, root_name
from generator.lint.training import Loop


class LossKeptWithGraph(Rule):
    """A loss (or model output) kept across steps keeps its whole autograd graph alive:
    appending it to a list, or summing it with `+=`, holds every step's activations until
    the container goes away, and `total += loss` chains the graphs together. Keep
    `loss.detach()` (still on the device) or `loss.item()` (a Python number). A fresh list
    each step, holding the outputs of that step's micro-batches, is not kept across steps,
    and a name rebound to a host value first (`loss = loss.item()`,
    `batch_loss = batch_loss.data.cpu().numpy()`) holds no graph."""

    code = "PTT025"
    name = "loss-kept-with-graph"
    severity = "warning"
    message = "loss or output kept across steps with its graph: keep `.detach()` (or `.item()`)"
    message_zh = "损失或输出连同计算图一起跨步保留：请保留 `.detach()`（或 `.item()`）的结果"
    why_zh = (
        "跨步保留的损失（或模型输出）会让它的整个计算图一直存活：把它追加到列表里，或者用 `+=` 累加，"
        "都会让每一步的激活值保留到容器被释放为止，而 `total += loss` 还会把各步的计算图串在一起。"
        "请保留 `loss.detach()`（仍在设备上）或 `loss.item()`（Python 数值）。每一步新建、只保存这一步"
        "各微批次输出的列表，不算跨步保留；先被重新赋值为主机上的值（`loss = loss.item()`、"
        "`batch_loss = batch_loss.data.cpu().numpy()`）的名字也不带计算图。"
    )
    tip = "detach-summary-statistics"
    VALID = (
        "for x, y in data:\n    loss = f(model(x), y)\n    loss.backward()\n"
        "    running += loss.detach()\n    losses.append(loss.detach())\n",
        "for x in micro_batches:\n    loss = f(x)\n    total += loss\n"
        "    if last:\n        total.backward()\n",
        "import torch\nfor x in data:\n    loss = f(x)\n    losses.append(loss)\n"
        "    torch.stack(losses).sum().backward()\n",
        # the outputs of one step's micro-batches, a fresh list every step, already backpropagated
        "import torch\nfor data, target in loader:\n    outputs = []\n"
        "    for chunk, target_chunk in zip(data.chunk(4), target.chunk(4)):\n"
        "        out = model(chunk)\n        outputs.append(out)\n"
        "        (f(out, target_chunk) / 4).backward()\n    optimizer.step()\n"
        "    acc = accuracy(torch.cat(outputs), target)\n",
        # the loss is rebound to a NumPy value before it is summed
        "for images, labels in loader:\n    batch_loss = criterion(model(images), labels)\n"
        "    batch_loss.backward()\n    optimizer.step()\n"
        "    batch_loss = batch_loss.detach().cpu().numpy()\n    loss_sum += batch_loss\n",
    )
    INVALID = (
        Invalid(
            "for x, y in data:\n    loss = f(model(x), y)\n    loss.backward()\n"
            "    optimizer.step()\n    total_loss += loss\n",
            instead="for x, y in data:\n    loss = f(model(x), y)\n    loss.backward()\n"
            "    optimizer.step()\n    total_loss += loss.detach()\n",
        ),
        "for x, y in data:\n    loss = f(model(x), y)\n    loss.backward()\n    losses.append(loss)\n",
        "for x, y in data:\n    out = model(x)\n    f(out, y).backward()\n    outputs.append(out)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for loop in ctx.loops.training_loops:
            kept = ctx.loops.loss_names(loop) | outputs(ctx, loop)
            if not kept:
                continue
            for node in ctx.loops.all_nodes(loop):
                if (
                    isinstance(node, ast.Call)
                    and method_name(node) == "append"
                    and len(node.args) == 1
                    and isinstance(node.args[0], ast.Name)
                    and node.args[0].id in kept
                ):
                    container = root_name(receiver(node))
                    if (
                        container
                        and not feeds_backward(ctx, loop, container)
                        and not self._new_each_step(ctx, loop, container)
                    ):
                        yield Report(node)
                elif (
                    isinstance(node, ast.AugAssign)
                    and isinstance(node.op, ast.Add)
                    and isinstance(node.target, ast.Name | ast.Attribute)
                    and not (isinstance(node.target, ast.Name) and node.target.id in kept)
                    and any(is_loss_value(v, kept) for v in self._terms(node.value))
                ):
                    target = root_name(node.target)
                    if (
                        target
                        and not feeds_backward(ctx, loop, target)
                        and not self._rebound_to_host(ctx, loop, node, kept)
                    ):
                        yield Report(node)

    @staticmethod
    def _rebound_to_host(ctx: Context, loop: Loop, node: ast.AugAssign, kept: set[str]) -> bool:
        """Whether every kept name ``node`` adds was last bound, earlier in the step, to a
        value on the host (``loss = loss.item()``)."""
        names = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)} & kept
        earlier = [
            a
            for a in ctx.loops.all_nodes(loop)
            if isinstance(a, ast.Assign) and a.lineno < node.lineno
        ]
        for name in names:
            last = max(
                (
                    a
                    for a in earlier
                    if any(isinstance(t, ast.Name) and t.id == name for t in a.targets)
                ),
                key=lambda a: a.lineno,
                default=None,
            )
            if last is None or not host_value(ctx, last.value):
                return False
        return bool(names)

    @staticmethod
    def _new_each_step(ctx: Context, loop: Loop, name: str) -> bool:
        """Whether ``name`` is a fresh list in each iteration of ``loop`` or of a loop around
        it: a micro-batch loop's outputs, already backpropagated, last one step."""
        for anc in [loop, *ctx.ancestors(loop)]:
            if isinstance(anc, SCOPES):
                return False
            if isinstance(anc, LOOPS):
                for n in iter_region(anc.body):
                    if (
                        isinstance(n, ast.Assign)
                        and isinstance(n.value, ast.List)
                        and not n.value.elts
                        and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
                    ):
                        return True
        return False

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
    message_zh = (
        "训练循环中调用 `torch.cuda.empty_cache()`：它释放不了正在使用的显存，还会拖慢下一步"
    )
    why_zh = (
        "`torch.cuda.empty_cache()` 不会释放仍被张量使用的显存；它只是把分配器缓存的空闲块还给驱动，"
        "下一步又得用很慢的 `cudaMalloc` 重新申请。在训练循环里调用它只会浪费时间。"
    )
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
        for _, node, _ in every_step(ctx):
            if isinstance(node, ast.Call) and ctx.qualname(node.func) in {
                "torch.cuda.empty_cache",
                "torch.cuda.memory.empty_cache",
            }:
                yield Report(node)


class MetricItemInEvalLoop(Rule):
    """In an evaluation loop, `correct += (pred == y).sum().item()` copies to the host and
    waits for the GPU on every batch. Sum on the device (`correct += (pred == y).sum()`)
    and convert once after the loop. The same holds for `meter.update(loss.item())`,
    `losses.append(loss.item())`, `totals[k] = x.item()`, a number read into a variable and
    summed on the next line, and `total += loss.cpu().numpy()` into a number. An evaluation
    loop trains nothing and runs under `no_grad`/`inference_mode` (around it, on its
    function, around every call of its function) or runs its forward under one. A batch
    that has already called `torch.cuda.synchronize()` has paid for the wait: the reads
    after it are not reported."""

    code = "PTT036"
    name = "metric-item-in-eval-loop"
    severity = "warning"
    message = (
        "metric summed with `.item()` on every evaluation batch: sum on the device, convert once"
    )
    message_zh = "每个评估批次都用 `.item()` 累加指标：在设备上求和，最后只转换一次"
    why_zh = (
        "在评估循环里，`correct += (pred == y).sum().item()` 每个批次都要拷到主机并等待 GPU。在设备上"
        "求和（`correct += (pred == y).sum()`），循环结束后再转换一次。`meter.update(loss.item())`、"
        "`losses.append(loss.item())`、`totals[k] = x.item()`、先读进一个变量再在下一行累加的数值，以及累加进"
        "数值变量的 `total += loss.cpu().numpy()`，也都一样。评估循环指的是不做任何训练、并且在"
        " `no_grad`/`inference_mode` 下运行的循环（包在它外面、装饰它所在的函数，或者包住该函数的每一处"
        "调用），或者只把前向传播放在其中运行的循环。如果这个批次已经调用过 `torch.cuda.synchronize()`，"
        "等待已经发生，之后的读取不会报告。"
    )
    tip = "track-metrics-on-device"
    VALID = (
        "import torch\n\n@torch.inference_mode()\ndef evaluate(model, loader):\n"
        "    correct = 0\n    for x, y in loader:\n        correct += (model(x).argmax(1) == y).sum()\n"
        "    return correct.item()\n",
        # the batch already waited for the GPU (timing each batch): the reads after it are free
        "import time\nimport torch\n\n@torch.no_grad()\ndef validate(model, loader):\n"
        "    for x, y in loader:\n        start = time.time()\n        loss = f(model(x), y)\n"
        "        torch.cuda.synchronize()\n        batch_time.update(time.time() - start)\n"
        "        losses.update(loss.item(), x.size(0))\n",
    )
    INVALID = (
        "import torch\n\n@torch.no_grad()\ndef evaluate(model, loader):\n"
        "    correct = 0\n    for x, y in loader:\n"
        "        correct += (model(x).argmax(1) == y).sum().item()\n    return correct\n",
        "import torch\nwith torch.inference_mode():\n    for x, y in loader:\n"
        "        total_loss += f(model(x), y).item() * len(x)\n",
        # an AverageMeter, as ImageNet-style validate() functions write it
        "import torch\n\n@torch.no_grad()\ndef validate(loader, model, criterion):\n"
        "    losses = AverageMeter('Loss')\n    for images, target in loader:\n"
        "        loss = criterion(model(images), target)\n"
        "        losses.update(loss.item(), images.size(0))\n    return losses.avg\n",
        "import torch\nwith torch.no_grad():\n    for batch in loader:\n"
        "        out = model(**batch)\n        stats['loss'] = out.loss.item()\n",
        # a helper only called under no_grad: its loop evaluates; `else: break` keeps it every batch
        "import torch\n\ndef loss_over(loader, model, num_batches):\n    total = 0.0\n"
        "    for i, (x, y) in enumerate(loader):\n        if i < num_batches:\n"
        "            total += f(model(x), y).item()\n        else:\n            break\n"
        "    return total / num_batches\n\n"
        "def evaluate(model):\n    model.eval()\n    with torch.no_grad():\n"
        "        val = loss_over(val_loader, model, 10)\n    model.train()\n    return val\n",
        # read into a variable in both branches, then summed
        "import torch\n\n@torch.no_grad()\ndef validate(model, loader):\n    total = 0.0\n"
        "    for x, y in loader:\n        loss = f(model(x), y)\n        if distributed:\n"
        "            value = reduce_mean(loss).item()\n        else:\n            value = loss.item()\n"
        "        total += value\n    return total\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for site in sites(ctx, "PTT036"):
            yield Report(site.node)
