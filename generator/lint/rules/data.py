"""Data loading: workers, pinned memory and the copies that use it, distributed sampling."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule, add_keyword
from generator.lint.rules.tensors import device_of
from generator.lint.syntax import (
    has_star_kwargs,
    is_const,
    kwarg,
    method_name,
    receiver,
    root_name,
)

_DATALOADER = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
_SAMPLER = (
    "torch.utils.data.DistributedSampler",
    "torch.utils.data.distributed.DistributedSampler",
)


_IN_MEMORY = {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}
_LISTS = (ast.List, ast.ListComp, ast.Tuple)


def _dataset_values(ctx: Context, call: ast.Call) -> list[ast.AST]:
    """What a ``DataLoader`` loads: its dataset argument, or the values assigned to it."""
    dataset = call.args[0] if call.args else getattr(kwarg(call, "dataset"), "value", None)
    if isinstance(dataset, ast.Name):
        return list(ctx.assignments.get(dataset.id, ()))
    return [] if dataset is None else [dataset]


def _dataset_in_memory(ctx: Context, call: ast.Call) -> bool:
    """A `TensorDataset`, or a Python list of samples: no per-item loading to parallelise."""
    values = _dataset_values(ctx, call)
    return bool(values) and all(
        isinstance(v, _LISTS) or (isinstance(v, ast.Call) and ctx.qualname(v.func) in _IN_MEMORY)
        for v in values
    )


def _dataset_on_device(ctx: Context, call: ast.Call) -> bool:
    """A `TensorDataset` of tensors made on (or moved to) a device: nothing left to pin."""
    values = _dataset_values(ctx, call)
    return bool(values) and all(
        isinstance(v, ast.Call)
        and ctx.qualname(v.func) in _IN_MEMORY
        and any(
            isinstance(n, ast.keyword)
            and n.arg == "device"
            or (isinstance(n, ast.Call) and method_name(n) in {"to", "cuda"})
            for n in ast.walk(v)
        )
        for v in values
    )


class DataLoaderNoWorkers(Rule):
    """With the default `num_workers=0` the training process itself loads, decodes and
    augments every batch while the GPU waits. Worker processes prepare batches in
    parallel. Data that is already in memory (a `TensorDataset`, a list of samples) gains
    little from workers: index it directly instead. Reported only in files that train on CUDA; where
    CUDA is used only if available (`"cuda" if torch.cuda.is_available() else "cpu"`, `if
    args.cuda: model.cuda()`), the message says so."""

    code = "PTT016"
    name = "dataloader-no-workers"
    severity = "info"
    message = "`DataLoader` without `num_workers` loads every batch in the training process (fine for in-memory tensors)"
    message_zh = "`DataLoader` 没有设置 `num_workers`：每个批次都在训练进程里加载（数据已是内存中的张量时没关系）"
    variants = {
        "maybe": (
            "`DataLoader` without `num_workers`: when the script runs on CUDA, every batch is loaded in the training process while the GPU waits",
            "`DataLoader` 没有设置 `num_workers`：脚本在 CUDA 上运行时，每个批次都在训练进程里加载，GPU 只能等着",
        )
    }
    why_zh = (
        "在默认的 `num_workers=0` 下，训练进程要自己加载、解码和增强每个批次，GPU 只能等着；worker"
        " 进程可以并行准备批次。已经放在内存里的数据（`TensorDataset`、由样本组成的列表）从 worker 获益"
        "很少，"
        '直接按索引取批次即可。只在训练用到 CUDA 的文件中报告；如果只在 CUDA 可用时才使用它（`"cuda"'
        ' if torch.cuda.is_available() else "cpu"`、`if args.cuda: model.cuda()`），输出信息会注明这一点。'
    )
    tip = "dataloader-num-workers"
    VALID = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=64, num_workers=8, pin_memory=True)\n"
        "model.cuda()\nfor x, y in loader:\n    f(x, y).backward()\n",
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds)\n"
        "for x, y in loader:\n    f(x, y).backward()\n",
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torch.utils.data import DataLoader\n"
            "loader = DataLoader(ImageFolder(root), batch_size=64, shuffle=True, pin_memory=True)\n"
            "model = Net().cuda()\nfor x, y in loader:\n"
            "    loss = f(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))\n"
            "    loss.backward()\n",
            instead="import torch\nfrom torch.utils.data import DataLoader\n"
            "loader = DataLoader(\n    ImageFolder(root), batch_size=64, shuffle=True, num_workers=8, pin_memory=True\n)\n"
            "model = Net().cuda()\nfor x, y in loader:\n"
            "    loss = f(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))\n"
            "    loss.backward()\n",
        ),
        # CUDA only where it exists: the most common idiom, reported with that caveat
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "loader = DataLoader(dataset=train_set, batch_size=100, shuffle=True)\n"
        "for images, labels in loader:\n    loss = f(model(images.to(device)), labels.to(device))\n"
        "    loss.backward()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        use = ctx.loops.cuda_use
        if use is None:
            return
        for call in ctx.calls(*_DATALOADER):
            if has_star_kwargs(call) or len(call.args) > 1 or kwarg(call, "num_workers"):
                continue
            if not _dataset_in_memory(ctx, call):
                yield Report(call, variant="maybe" if use == "maybe" else None)


class DataLoaderNoPinMemory(Rule):
    """Batches in ordinary pageable memory are copied to the GPU through a staging buffer
    while the host waits, even with `non_blocking=True`. `pin_memory=True` has the
    `DataLoader` return page-locked batches, whose copies can overlap with compute. A
    `TensorDataset` already on the device has nothing to pin. Reported only in files that train
    on CUDA; where CUDA is used only if available, the
    message suggests `pin_memory=torch.cuda.is_available()` (pinning warns without CUDA)."""

    code = "PTT017"
    name = "dataloader-no-pin-memory"
    severity = "info"
    message = "`DataLoader` without `pin_memory=True` while training on CUDA: host-to-device copies cannot overlap compute"
    message_zh = (
        "训练用到 CUDA，`DataLoader` 却没有 `pin_memory=True`：主机到设备的拷贝无法与计算重叠"
    )
    variants = {
        "maybe": (
            "`DataLoader` without `pin_memory`: when the script runs on CUDA, host-to-device copies cannot overlap compute; pass `pin_memory=torch.cuda.is_available()`",
            "`DataLoader` 没有设置 `pin_memory`：脚本在 CUDA 上运行时，主机到设备的拷贝无法与计算重叠；请传 `pin_memory=torch.cuda.is_available()`",
        )
    }
    why_zh = (
        "普通可分页内存中的批次要经过一块暂存缓冲区才能拷到 GPU，即使写了 `non_blocking=True`，主机也要"
        "等待。`pin_memory=True` 让 `DataLoader` 交出锁页内存中的批次，它们的拷贝可以与计算重叠。已经在设备上的"
        " `TensorDataset` 不需要锁页。只在"
        "训练用到 CUDA 的文件中报告；如果只在 CUDA 可用时才使用它，输出信息会建议写成"
        " `pin_memory=torch.cuda.is_available()`（没有 CUDA 时锁页会发出警告）。"
    )
    tip = "pin-memory-non-blocking"
    VALID = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=64, num_workers=8, pin_memory=True)\n"
        "model.cuda()\nfor x, y in loader:\n    f(x, y).backward()\n",
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torch.utils.data import DataLoader\n"
            "loader = DataLoader(ds, batch_size=64, num_workers=4)\n"
            'device = torch.device("cuda")\nfor x, y in loader:\n'
            "    x = x.to(device, non_blocking=True)\n    f(x, y).backward()\n",
            instead="import torch\nfrom torch.utils.data import DataLoader\n"
            "loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)\n"
            'device = torch.device("cuda")\nfor x, y in loader:\n'
            "    x = x.to(device, non_blocking=True)\n    f(x, y).backward()\n",
        ),
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=64, num_workers=4)\n"
        "for x, y in loader:\n    if args.cuda:\n        x, y = x.cuda(), y.cuda()\n"
        "    f(x, y).backward()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        use = ctx.loops.cuda_use
        if use is None:
            return
        for call in ctx.calls(*_DATALOADER):
            if has_star_kwargs(call) or len(call.args) > 7 or kwarg(call, "pin_memory"):
                continue
            if not _dataset_on_device(ctx, call):
                yield Report(call, variant="maybe" if use == "maybe" else None)


def _copy_is_blocking(call: ast.Call) -> bool:
    """Whether ``x.cuda(...)``/``x.to(...)`` copies without ``non_blocking`` (a keyword, or
    the positional slot: ``cuda(device, non_blocking)``, ``to(device, dtype, non_blocking)``)."""
    if kwarg(call, "non_blocking") is not None or has_star_kwargs(call):
        return False
    return len(call.args) < (2 if method_name(call) == "cuda" else 3)


class PinMemoryBlockingCopy(Rule):
    """Pinned memory is only half of the pair: a copy from page-locked memory returns at
    once, letting the host go on to queue the forward pass, only with `non_blocking=True`.
    Without it the copy is faster than from pageable memory, but the host still blocks on
    every transfer. Kernels on the same CUDA stream still run after the copy, so no
    synchronisation is needed. Reported for the batches a training loop copies to the device
    in a file whose `DataLoader` sets `pin_memory`."""

    code = "PTT054"
    name = "pin-memory-blocking-copy"
    severity = "warning"
    message = "batch copied to the device without `non_blocking=True` although the `DataLoader` pins memory: the host still waits for every copy"
    message_zh = (
        "`DataLoader` 已经锁页，批次拷到设备时却没有 `non_blocking=True`：每次拷贝主机仍要等待"
    )
    why_zh = (
        "锁页内存只是前提：加上 `non_blocking=True` 后，从锁页内存出发的拷贝才会只排进 CUDA 流就立即返回，"
        "让主机接着提交前向传播。不加它，拷贝本身比从可分页内存出发要快，但每次传输主机仍然阻塞。同一个"
        " CUDA 流上的 kernel 仍排在拷贝之后执行，不需要额外同步。只报告训练循环把批次拷到设备上的地方，"
        "且同一文件中的 `DataLoader` 设置了 `pin_memory`。"
    )
    tip = "pin-memory-non-blocking"
    fixable = True
    fix_safety = "unsafe"
    fix_note = (
        "It adds `non_blocking=True`. A batch of a custom class may not take that argument in "
        "its own `.to()`; for tensors from the loader the copied values are the same."
    )
    fix_note_zh = (
        "修复会加上 `non_blocking=True`。自定义类的批次对象，它自己的 `.to()` 可能不接受这个参数；"
        "对 DataLoader 交出的张量，拷贝得到的数值完全相同。"
    )
    VALID = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)\n"
        "for x, y in loader:\n    x = x.to(device, non_blocking=True)\n"
        "    y = y.cuda(non_blocking=True)\n    f(model(x), y).backward()\n",
        # nothing is pinned: a blocking copy is what it costs anyway (PTT017's business)
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=64, num_workers=4)\n"
        "for x, y in loader:\n    x = x.to(device)\n    f(model(x), y).backward()\n",
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torch.utils.data import DataLoader\n"
            "loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)\n"
            "for images, target in loader:\n    images = images.to(device)\n"
            "    loss = f(model(images), target.to(device))\n    loss.backward()\n",
            "import torch\nfrom torch.utils.data import DataLoader\n"
            "loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)\n"
            "for images, target in loader:\n    images = images.to(device, non_blocking=True)\n"
            "    loss = f(model(images), target.to(device, non_blocking=True))\n    loss.backward()\n",
        ),
        Invalid(
            "import torch\nfrom torch.utils.data import DataLoader\n"
            "train_loader = DataLoader(ds, batch_size=64, pin_memory=torch.cuda.is_available())\n"
            "for i, (x, y) in enumerate(train_loader):\n    x, y = x.cuda(), y.cuda()\n"
            "    f(model(x), y).backward()\n    optimizer.step()\n",
            "import torch\nfrom torch.utils.data import DataLoader\n"
            "train_loader = DataLoader(ds, batch_size=64, pin_memory=torch.cuda.is_available())\n"
            "for i, (x, y) in enumerate(train_loader):\n"
            "    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)\n"
            "    f(model(x), y).backward()\n    optimizer.step()\n",
        ),
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        pinned = [
            c
            for c in ctx.calls(*_DATALOADER)
            if (kw := kwarg(c, "pin_memory")) is not None and not is_const(kw.value, False)
        ]
        if not pinned:
            return
        for loop in ctx.loops.training_loops:
            if not isinstance(loop, ast.For | ast.AsyncFor):
                continue
            batch = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
            for node in ctx.loops.all_nodes(loop):
                if (
                    isinstance(node, ast.Call)
                    and method_name(node) in {"to", "cuda"}
                    and root_name(receiver(node)) in batch
                    and device_of(ctx, node)[0]
                    and _copy_is_blocking(node)
                ):
                    yield Report(node, [add_keyword(ctx.lines, node, "non_blocking=True")])


class DistributedSamplerSetEpoch(Rule):
    """A `DistributedSampler` shuffles with a seed derived from its epoch, which only
    `sampler.set_epoch(epoch)` changes: without it every epoch visits the data in the same
    order. Call it at the start of each epoch, before iterating the loader."""

    code = "PTT018"
    name = "distributed-sampler-set-epoch"
    severity = "error"
    message = "`DistributedSampler` without `set_epoch(epoch)`: every epoch repeats the same order"
    message_zh = "`DistributedSampler` 没有调用 `set_epoch(epoch)`：每个 epoch 的数据顺序都一样"
    why_zh = (
        "`DistributedSampler` 用一个由 epoch 推导出的种子打乱数据，而只有 `sampler.set_epoch(epoch)`"
        " 会改变这个 epoch：不调用它，每个 epoch 都按同样的顺序遍历数据。请在每个 epoch 开始、遍历"
        " DataLoader 之前调用它。"
    )
    tip = "distributed-sampler-set-epoch"
    VALID = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "sampler = DistributedSampler(ds)\nloader = DataLoader(ds, sampler=sampler)\n"
        "for epoch in range(10):\n    sampler.set_epoch(epoch)\n    for batch in loader:\n        step(batch)\n",
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "loader = DataLoader(ds, sampler=DistributedSampler(ds, shuffle=False))\n"
        "for epoch in range(10):\n    for batch in loader:\n        step(batch)\n",
    )
    INVALID = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "sampler = DistributedSampler(ds)\nloader = DataLoader(ds, sampler=sampler)\n"
        "for epoch in range(10):\n    for batch in loader:\n        step(batch)\n",
        "import torch\nloader = torch.utils.data.DataLoader(ds, "
        "sampler=torch.utils.data.distributed.DistributedSampler(ds))\n"
        "def train(epochs):\n    for epoch in range(epochs):\n        run_epoch(loader)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        if ctx.methods("set_epoch"):
            return
        epoch_loop = any(
            isinstance(loop, ast.For) and "epoch" in ctx.segment(loop.target).lower()
            for loop in ctx.by_type[ast.For]
        )
        for call in ctx.calls(*_SAMPLER):
            if is_const(getattr(kwarg(call, "shuffle"), "value", None), False):
                continue
            if epoch_loop or self._iterated_in_loop(ctx, call):
                yield Report(call)

    @staticmethod
    def _iterated_in_loop(ctx: Context, call: ast.Call) -> bool:
        """Whether the sampler, or the loader built on it, is iterated inside a loop."""
        names: set[str] = set()
        holder = ctx.parent(call)
        if isinstance(holder, ast.keyword):  # DataLoader(ds, sampler=DistributedSampler(ds))
            holder = ctx.parent(ctx.parent(holder))
        if isinstance(holder, ast.Assign):
            names |= {t.id for t in holder.targets if isinstance(t, ast.Name)}
        for loader in ctx.calls(*_DATALOADER):
            sampler = getattr(kwarg(loader, "sampler"), "value", None)
            assign = ctx.parent(loader)
            if (
                isinstance(sampler, ast.Name)
                and sampler.id in names
                and isinstance(assign, ast.Assign)
            ):
                names |= {t.id for t in assign.targets if isinstance(t, ast.Name)}
        for node in [*ctx.by_type[ast.For], *ctx.by_type[ast.comprehension]]:
            assert isinstance(node, ast.For | ast.comprehension)
            it = node.iter
            if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(it)) and any(
                isinstance(a, ast.For | ast.While) for a in ctx.ancestors(node)
            ):
                return True
        return False
