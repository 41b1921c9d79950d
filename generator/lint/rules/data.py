"""Data loading: workers, pinned memory and the copies that use it, distributed sampling."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules import loaders
from generator.lint.rules.base import Invalid, Report, Rule, add_keyword
from generator.lint.rules.tensors import device_of
from generator.lint.syntax import (
    has_star_kwargs,
    is_const,
    kwarg,
    last_name,
    method_name,
    receiver,
    root_name,
)

_DATALOADER = loaders.DATALOADER
_SAMPLER = (
    "torch.utils.data.DistributedSampler",
    "torch.utils.data.distributed.DistributedSampler",
)


#: Names of evaluation functions and of validation or test sets.
_EVAL_NAME = re.compile(
    r"(^|_)(val|valid|validation|validate|eval|evaluate|test|dev)(_|set|$)", re.I
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
            given = loaders.options(ctx, call)
            if given is None or len(call.args) > 1 or "num_workers" in given:
                continue
            if not loaders.dataset_in_memory(ctx, call):
                yield Report(call, variant="maybe" if use == "maybe" else None)


class DataLoaderNoPinMemory(Rule):
    """Batches in ordinary pageable memory are copied to the GPU through a staging buffer
    while the host waits, even with `non_blocking=True`. `pin_memory=True` has the
    `DataLoader` return page-locked batches, whose copies can overlap with compute once they
    are made with `non_blocking=True` (`x.to(device, non_blocking=True)`): pinning alone only
    speeds the copy up. A `TensorDataset` already on the device has nothing to pin. Reported
    only in files that train on CUDA; where CUDA is used only if available, the message
    suggests `pin_memory=torch.cuda.is_available()` (pinning warns without CUDA). Options
    passed through a `**kwargs` dict built in the same function are read. A loader whose
    batches never reach a device on every step (iterated by a loop that runs on the host,
    or read for a sample grid every N batches) is left alone."""

    code = "PTT017"
    name = "dataloader-no-pin-memory"
    severity = "info"
    message = "`DataLoader` without `pin_memory=True` while training on CUDA: host-to-device copies cannot overlap compute (pin, then copy with `non_blocking=True`)"
    message_zh = "训练用到 CUDA，`DataLoader` 却没有 `pin_memory=True`：主机到设备的拷贝无法与计算重叠（请启用锁页内存，并用 `non_blocking=True` 拷贝）"
    variants = {
        "maybe": (
            "`DataLoader` without `pin_memory`: when the script runs on CUDA, host-to-device copies cannot overlap compute; pass `pin_memory=torch.cuda.is_available()` and copy with `non_blocking=True`",
            "`DataLoader` 没有设置 `pin_memory`：脚本在 CUDA 上运行时，主机到设备的拷贝无法与计算重叠；请传 `pin_memory=torch.cuda.is_available()`，并用 `non_blocking=True` 拷贝",
        )
    }
    why_zh = (
        "普通可分页内存中的批次要经过一块暂存缓冲区才能拷到 GPU，即使写了 `non_blocking=True`，主机也要"
        "等待。`pin_memory=True` 让 `DataLoader` 交出锁页内存中的批次，再用 `non_blocking=True` 拷贝"
        "（`x.to(device, non_blocking=True)`），拷贝才能与计算重叠：只锁页，只是让拷贝本身更快。已经在设备上的"
        " `TensorDataset` 不需要锁页。只在"
        "训练用到 CUDA 的文件中报告；如果只在 CUDA 可用时才使用它，输出信息会建议写成"
        " `pin_memory=torch.cuda.is_available()`（没有 CUDA 时锁页会发出警告）。在同一个函数里用字面量构造、"
        "经 `**kwargs` 传入的选项也会读取。批次不会每一步都送到设备上的 DataLoader（由在主机上运行的循环"
        "遍历，或者每 N 个批次才读一次、用来画样例图）不会报告。"
    )
    tip = "pin-memory-non-blocking"
    VALID = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=64, num_workers=8, pin_memory=True)\n"
        "model.cuda()\nfor x, y in loader:\n    f(x, y).backward()\n",
        # the options come in a dict built in the same function
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader_args = {'batch_size': 64}\nif use_cuda:\n"
        "    loader_args.update({'num_workers': 4, 'pin_memory': True})\n"
        "loader = DataLoader(ds, shuffle=True, **loader_args)\n"
        "model.cuda()\nfor x, y in loader:\n    f(model(x.cuda(non_blocking=True)), y).backward()\n",
        # a baseline fitted on the host, in a file that trains its main model on CUDA
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\n\n"
        "def fit_probe(features, labels):\n    probe = nn.Linear(features.shape[1], 10)\n"
        "    optimizer = torch.optim.SGD(probe.parameters(), lr=0.1)\n"
        "    loader = DataLoader(TensorPairs(features, labels), batch_size=256)\n"
        "    for x, y in loader:\n        loss = nn.functional.cross_entropy(probe(x), y)\n"
        "        loss.backward()\n        optimizer.step()\n        print(loss.item())\n\n"
        "model = Net().cuda()\nfor x, y in train_loader:\n"
        "    f(model(x.cuda(non_blocking=True)), y.cuda()).backward()\n",
        # a grid of samples drawn every 500 steps: these batches are not on the step's path
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "train_loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)\n"
        "sample_loader = DataLoader(val_ds, batch_size=16, shuffle=True)\n"
        "model.cuda()\nfor i, (x, y) in enumerate(train_loader):\n"
        "    f(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True)).backward()\n"
        "    optimizer.step()\n    if i % 500 == 0:\n        grid = next(iter(sample_loader))[0].cuda()\n"
        "        save_image(model(grid), f'sample_{i}.png')\n",
        # the same, with the loaders built and returned by a function of the file
        "import torch\nfrom torch.utils.data import DataLoader\n\ndef build_loaders(ds, val_ds):\n"
        "    train = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)\n"
        "    grid = DataLoader(val_ds, batch_size=16, shuffle=True)\n    return train, grid\n\n"
        "train_loader, sample_loader = build_loaders(ds, val_ds)\nmodel.cuda()\n"
        "for i, (x, y) in enumerate(train_loader):\n"
        "    f(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True)).backward()\n"
        "    optimizer.step()\n    if i % 500 == 0:\n        show(model(next(iter(sample_loader))[0].cuda()))\n",
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
        # the dict passed as **kwargs has no pin_memory
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader_args = dict(batch_size=64, num_workers=4)\n"
        "loader = DataLoader(ds, shuffle=True, **loader_args)\n"
        "model.cuda()\nfor x, y in loader:\n    f(model(x.cuda()), y.cuda()).backward()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        use = ctx.loops.cuda_use
        if use is None:
            return
        for call in ctx.calls(*_DATALOADER):
            given = loaders.options(ctx, call)
            if given is None or len(call.args) > 7 or "pin_memory" in given:
                continue
            if loaders.dataset_on_device(ctx, call) or not loaders.feeds_device_steps(ctx, call):
                continue
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
    message_zh = "`DataLoader` 已启用锁页内存（`pin_memory=True`），批次拷到设备时却没有 `non_blocking=True`：每次拷贝主机仍要等待"
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
    order. Call it at the start of each epoch, before iterating the loader. A sampler for
    evaluation (built under `torch.no_grad()`, in an evaluation function, or over a
    validation or test set by its name) needs no new order: the metrics do not depend on
    it."""

    code = "PTT018"
    name = "distributed-sampler-set-epoch"
    severity = "error"
    message = "`DistributedSampler` without `set_epoch(epoch)`: every epoch repeats the same order"
    message_zh = "`DistributedSampler` 没有调用 `set_epoch(epoch)`：每个 epoch 的数据顺序都一样"
    why_zh = (
        "`DistributedSampler` 用一个由 epoch 推导出的种子打乱数据，而只有 `sampler.set_epoch(epoch)`"
        " 会改变这个 epoch：不调用它，每个 epoch 都按同样的顺序遍历数据。请在每个 epoch 开始、遍历"
        " DataLoader 之前调用它。用于评估的采样器（在 `torch.no_grad()` 下或评估函数里创建，或者从名字看是"
        "验证集、测试集上的采样器）不需要新的顺序：指标与顺序无关。"
    )
    tip = "distributed-sampler-set-epoch"
    VALID = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "sampler = DistributedSampler(ds)\nloader = DataLoader(ds, sampler=sampler)\n"
        "for epoch in range(10):\n    sampler.set_epoch(epoch)\n    for batch in loader:\n        step(batch)\n",
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "loader = DataLoader(ds, sampler=DistributedSampler(ds, shuffle=False))\n"
        "for epoch in range(10):\n    for batch in loader:\n        step(batch)\n",
        # a sampler for evaluation: the order of the batches does not change a metric
        "import torch\nfrom torch.utils.data import DataLoader, DistributedSampler\n\n"
        "def evaluate(model, valset):\n    model.eval()\n    with torch.no_grad():\n"
        "        sampler = DistributedSampler(valset) if distributed else None\n"
        "        loader = DataLoader(valset, sampler=sampler, batch_size=64)\n"
        "        return sum(model(x).sum() for x in loader)\n\n"
        "for epoch in range(10):\n    train_one_epoch()\n    evaluate(model, valset)\n",
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "test_sampler = DistributedSampler(test_dataset)\n"
        "test_loader = DataLoader(test_dataset, sampler=test_sampler)\n"
        "for epoch in range(10):\n    train_one_epoch()\n    test(test_loader)\n",
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
            if self._for_evaluation(ctx, call):
                continue
            if epoch_loop or self._iterated_in_loop(ctx, call):
                yield Report(call)

    @staticmethod
    def _for_evaluation(ctx: Context, call: ast.Call) -> bool:
        """A sampler built for evaluation: under ``no_grad``, in a function that evaluates
        (``validate``, ``evaluate``, ``test``...), or over a set named for validation or test
        (the dataset argument or the name the sampler is bound to)."""
        if ctx.in_no_grad(call):
            return True
        func = ctx.enclosing_function(call)
        if func is not None and _EVAL_NAME.search(func.name):
            return True
        names = [last_name(call.args[0]) if call.args else None]
        holder = ctx.parent(call)
        while isinstance(holder, ast.IfExp):
            holder = ctx.parent(holder)
        if isinstance(holder, ast.Assign):
            names += [last_name(t) for t in holder.targets]
        return any(n is not None and _EVAL_NAME.search(n) for n in names)

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
