"""Host-device synchronisations on every step of a training loop: `.item()`, copies to the
host, Python numbers and conditions made from tensors, printing and formatting tensors,
explicit `torch.cuda.synchronize()`. Where each happens is found once per file
(`.sync_sites`): one finding per statement, one per block of consecutive waits, none in a
loop that runs on the host."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule
from generator.lint.rules.sync_sites import sites


def _reports(ctx: Context, code: str) -> Iterator[Report]:
    for site in sites(ctx, code):
        yield Report(site.node, args=site.args, variant=site.variant)


class ItemEveryStep(Rule):
    """`.item()` copies a value from the GPU to the host, so the CPU stops until every
    queued kernel has finished: once per step this serialises the loop. Keep running
    values on the device (`running += loss.detach()`) and read them every N steps. A step
    that has already called `torch.cuda.synchronize()` has paid for the wait: there the
    synchronisation is reported (PTT052), not an `.item()` after it. A tensor built on the
    host (`torch.tensor(flag)` with no `device=`) is not reported: reading it waits for no
    GPU. "Every step" includes what runs under an `if` that holds on every step (the
    accumulation guard that steps the optimizer, a flag such as `if args.fp16:`, `if rank ==
    0:`) and an `.item()` in both branches of an `if`/`else`; a helper of this file called on
    every step that reads `.item()` (two calls deep at most) is reported at the call. A block
    of consecutive statements that each wait is reported once: after the first wait the
    others cost nothing more. A loop whose model and optimizer are built on the host, with
    nothing moved to a device, waits for no GPU and is left alone."""

    code = "PTT020"
    name = "item-every-step"
    severity = "warning"
    message = (
        "`.item()` on every step waits for the GPU: accumulate on the device, read every N steps"
    )
    message_zh = "每一步都调用 `.item()`，CPU 要等 GPU：在设备上累加，每 N 步读取一次"
    message_args = {"helper": "log_grad_norm", "line": "12"}
    variants = {
        "helper": (
            "`{helper}()`, called on every step, reads `.item()` (line {line}) and waits for the GPU: call it every N steps, or keep the value on the device",
            "每一步都调用的 `{helper}()` 会读取 `.item()`（第 {line} 行），CPU 要等 GPU：改为每 N 步调用一次，或把数值留在设备上",
        )
    }
    why_zh = (
        "`.item()` 把一个值从 GPU 拷到主机，CPU 必须停下来，直到排队的所有 kernel 都执行完毕：每步一次，"
        "就让整个循环串行化。把累计值留在设备上（`running += loss.detach()`），每 N 步读取一次。"
        "如果这一步已经调用过 `torch.cuda.synchronize()`，等待已经发生：这时报告的是同步本身"
        "（PTT052），而不是在它之后的 `.item()`。在主机上创建的张量（不带 `device=` 的 `torch.tensor(flag)`）"
        "不会被报告：读取它不需要等待任何 GPU。“每一步”也包括每一步都成立的 `if` 之下的代码（执行优化器更新的"
        "梯度累积判断、`if args.fp16:` 这样的开关、`if rank == 0:`），以及 `if`/`else` 两个分支都调用的"
        " `.item()`；本文件中每一步都调用、并在内部读取 `.item()` 的辅助函数（最多跟进两层调用），在调用处报告。"
        "连续几条语句都在等待时只报告一次：第一次等待之后，其余的不再多花时间。模型和优化器都在主机上创建、"
        "也没有任何东西搬到设备上的循环，不需要等 GPU，不会报告。"
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
        # a baseline fitted on the host, in a file whose main model trains on CUDA
        "import torch\nfrom torch import nn\n\ndef fit_baseline(x, y):\n"
        "    baseline = nn.Linear(x.shape[1], 1)\n"
        "    optimizer = torch.optim.SGD(baseline.parameters(), lr=0.1)\n"
        "    for _ in range(100):\n        loss = nn.functional.mse_loss(baseline(x), y)\n"
        "        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n"
        "        history.append(loss.item())\n    return baseline\n\n"
        "model = Net().cuda()\nfor x, y in loader:\n    f(model(x.cuda()), y.cuda()).backward()\n",
        # logging guarded by a modulo, and a value computed by the loop (a rare NaN)
        "import math\nfor step, (x, y) in enumerate(loader):\n    loss = f(model(x), y)\n"
        "    loss_value = loss.item() if step % 100 == 0 else None\n    loss.backward()\n"
        "    optimizer.step()\n    if loss_value is not None and not math.isfinite(loss_value):\n"
        "        print(loss.item())\n",
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
        # inside the accumulation guard: once per optimizer step
        "for i, (x, y) in enumerate(loader):\n    loss = f(model(x), y) / accum\n    loss.backward()\n"
        "    if (i + 1) % accum == 0:\n        optimizer.step()\n        optimizer.zero_grad()\n"
        "        writer.add_scalar('loss', loss.item(), i)\n",
        # in both branches of an if/else: one of them runs on every step
        "for x, y in loader:\n    loss = f(model(x), y)\n    if distributed:\n"
        "        logged = reduce_mean(loss.detach()).item()\n    else:\n"
        "        logged = loss.item()\n    loss.backward()\n    optimizer.step()\n",
        # a helper called on every step reads .item() for each parameter
        "def grad_norms(model):\n    return {n: p.grad.norm().item() for n, p in model.named_parameters()}\n\n"
        "def log_step(model, step):\n    logger.log(grad_norms(model), step)\n\n"
        "for step, (x, y) in enumerate(loader):\n    f(model(x), y).backward()\n"
        "    log_step(model, step)\n    optimizer.step()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        yield from _reports(ctx, "PTT020")


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
        yield from _reports(ctx, "PTT052")


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
        # one finding per statement: the .item() of .cpu().item() is PTT020's
        "for x, y in loader:\n    loss = f(model(x), y)\n    loss.backward()\n    optimizer.step()\n"
        "    history.append(loss.cpu().item())\n",
    )
    INVALID = (
        "for x, y in loader:\n    out = model(x)\n    loss = f(out, y)\n    loss.backward()\n"
        "    opt.step()\n    preds.extend(out.argmax(1).cpu().numpy())\n",
        "while step < n:\n    loss = f(x)\n    loss.backward()\n    log(loss.detach().tolist())\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        yield from _reports(ctx, "PTT021")


class PythonScalarEveryStep(Rule):
    """`float(loss)`, `int(correct)`, `bool(x == 0)` and `math.isnan(grad_norm)` convert a
    device tensor to a Python number, which waits for the GPU exactly like `.item()`: once
    per step this serialises the loop. Inside a loop over the samples of a batch
    (`int(pred[i])`, in training or in evaluation) it waits once per sample: convert the
    whole tensor once (`pred.tolist()`) and index the list."""

    code = "PTT022"
    name = "python-scalar-every-step"
    severity = "warning"
    message = "`float()`/`int()`/`bool()` of a device tensor on every step waits for the GPU: read it every N steps"
    message_zh = (
        "每一步都对设备上的张量调用 `float()`/`int()`/`bool()`，CPU 要等 GPU：每 N 步读取一次"
    )
    variants = {
        "sample": (
            "`int()`/`float()` of a tensor element for each sample waits for the GPU each time: convert the whole tensor once (`.tolist()`)",
            "逐个样本对张量元素调用 `int()`/`float()`，每次都要等 GPU：把整个张量一次性转换（`.tolist()`）再取值",
        )
    }
    why_zh = (
        "`float(loss)`、`int(correct)`、`bool(x == 0)` 和 `math.isnan(grad_norm)` 都把设备上的张量转换成"
        " Python 数值，和 `.item()` 一样要等 GPU：每步一次，就让整个循环串行化。在逐个样本的循环里"
        "（`int(pred[i])`，训练或评估时都一样），每个样本都要等一次：请把整个张量一次性转换"
        "（`pred.tolist()`），再从列表中取值。"
    )
    tip = "avoid-cpu-gpu-syncs"
    VALID = (
        "for x in data:\n    loss = f(x)\n    loss.backward()\n    n = int(len(x))\n",
        # one conversion of the whole tensor, then Python values per sample
        "import torch\n\n@torch.no_grad()\ndef evaluate(model, loader):\n    hits = 0\n"
        "    for x, y in loader:\n        pred = model(x).argmax(1).tolist()\n"
        "        for i, label in enumerate(y.tolist()):\n            hits += int(pred[i] == label)\n"
        "    return hits\n",
    )
    INVALID = (
        Invalid(
            "for x in data:\n    loss = f(x)\n    loss.backward()\n    history.append(float(loss))\n",
            instead="import torch\nfor x in data:\n    loss = f(x)\n    loss.backward()\n"
            "    history.append(loss.detach())\nhistory = torch.stack(history).tolist()\n",
        ),
        # a Python number per sample, in an evaluation loop
        "import torch\n\n@torch.no_grad()\ndef evaluate(model, loader, device):\n    hits = 0\n"
        "    for x, y in loader:\n        pred = model(x.to(device)).argmax(1)\n"
        "        for i in range(len(y)):\n            hits += int(pred[i]) == int(y[i])\n"
        "    return hits\n",
        # the gradient norm tested on the host on every step
        "import math\nimport torch\nfor x, y in loader:\n    loss = f(model(x), y)\n    loss.backward()\n"
        "    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "    if args.fp16:\n        skipped = math.isnan(grad_norm)\n    optimizer.step()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        yield from _reports(ctx, "PTT022")


class PrintTensorEveryStep(Rule):
    """Printing a device tensor, or formatting it into text (an f-string, `"%.3f" % loss`,
    `"{}".format(loss)`, `str(loss)`, for a log line or a progress bar), reads its value on
    the host: `Tensor.__format__` calls `.item()`, so the CPU waits for the GPU. Every step,
    that serialises the loop. Format every N steps, from a value copied once."""

    code = "PTT023"
    name = "print-tensor-every-step"
    severity = "warning"
    message = "printing or formatting a device tensor on every step waits for the GPU: format a value read every N steps"
    message_zh = "每一步都打印或格式化设备上的张量，CPU 要等 GPU：每 N 步读取一次数值再格式化"
    why_zh = (
        '打印设备上的张量，或把它格式化成文本（f-string、`"%.3f" % loss`、`"{}".format(loss)`、'
        "`str(loss)`，无论是写日志还是更新进度条），都要在主机端读取它的数值：`Tensor.__format__` 内部会调用"
        " `.item()`，所以 CPU 要等 GPU。每一步都这样做，整个循环就被串行化。请每 N 步读取一次数值，再用它格式化。"
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
        # a progress bar's text, %-formatted from the loss tensor
        "for x in data:\n    loss = f(x)\n    loss.backward()\n    optimizer.step()\n"
        "    pbar.set_postfix(loss='%.3f' % loss)\n",
        "import logging\nfor step, x in enumerate(data):\n    loss = f(x)\n    loss.backward()\n"
        "    optimizer.step()\n    logging.info('step {} loss {:.4f}'.format(step, loss))\n",
        # a device tensor of running means, formatted on rank 0 every step
        "import torch\nmean_loss = torch.zeros(3, device=device)\nfor i, (x, y) in enumerate(loader):\n"
        "    loss, items = f(model(x), y)\n    loss.backward()\n    optimizer.step()\n"
        "    if rank in (-1, 0):\n        mean_loss = (mean_loss * i + items) / (i + 1)\n"
        "        pbar.set_description(('%10.4g' * 3) % (*mean_loss,))\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        yield from _reports(ctx, "PTT023")


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
        yield from _reports(ctx, "PTT024")
