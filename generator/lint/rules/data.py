"""Tensors made from data, and data loading."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Edit, Invalid, Report, Rule, add_keyword, end_of
from generator.lint.syntax import (
    has_star_kwargs,
    is_const,
    kwarg,
    last_name,
    method_name,
    receiver,
    root_name,
)

_DATALOADER = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
_SAMPLER = (
    "torch.utils.data.DistributedSampler",
    "torch.utils.data.distributed.DistributedSampler",
)


#: NumPy functions that always return an array.
_ARRAY_FUNCS = {
    "array",
    "asarray",
    "ascontiguousarray",
    "load",
    "loadtxt",
    "genfromtxt",
    "fromfile",
    "frombuffer",
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "arange",
    "linspace",
    "logspace",
    "stack",
    "concatenate",
    "vstack",
    "hstack",
    "eye",
    "identity",
    "tile",
    "repeat",
    "memmap",
}
#: Array methods whose result is an array.
_ARRAY_METHODS = {"astype", "reshape", "transpose", "copy", "flatten", "ravel", "squeeze", "T"}


def _is_numpy_root(ctx: Context, name: str) -> bool:
    q = ctx.imports.get(name)
    if q is not None:
        return q.split(".")[0] == "numpy"
    return name == "np" and name not in ctx.assignments


def _numpy_array(ctx: Context, node: ast.AST, depth: int = 0) -> bool:
    """Whether ``node`` is a NumPy array by construction: ``np.load(...)``,
    ``rng.integers(0, 9, size=n)``, ``x.astype(...)`` or a slice of such an array, or a
    name only ever assigned such values. Scalars (``np.random.rand()``) are not arrays."""
    if depth > 3:
        return False
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Slice) and _numpy_array(ctx, node.value, depth + 1)
    if isinstance(node, ast.Name):
        values = ctx.assignments.get(node.id)
        return bool(values) and all(_numpy_array(ctx, v, depth + 1) for v in values)
    if not isinstance(node, ast.Call | ast.Attribute):
        return False
    root = root_name(node)
    if root is None or not (_is_numpy_root(ctx, root) or _numpy_object(ctx, root, depth)):
        return False
    chain = node
    while isinstance(chain, ast.Call | ast.Attribute | ast.Subscript):
        if isinstance(chain, ast.Call):
            name = method_name(chain) or (
                chain.func.id if isinstance(chain.func, ast.Name) else None
            )
            q = ctx.qualname(chain.func) or ""
            if name in _ARRAY_METHODS or kwarg(chain, "size") is not None:
                return True
            if q.startswith("numpy.") and q.rsplit(".", 1)[1] in _ARRAY_FUNCS:
                return True
            chain = chain.func
        elif isinstance(chain, ast.Attribute):
            if chain.attr == "T":
                return True
            chain = chain.value
        else:
            chain = chain.value
    return False


def _numpy_object(ctx: Context, name: str, depth: int) -> bool:
    """Whether ``name`` is only ever assigned NumPy objects (``rng = np.random.default_rng()``)."""
    values = ctx.assignments.get(name)
    return bool(values) and all(
        (r := root_name(v)) is not None
        and (_is_numpy_root(ctx, r) or (depth < 3 and _numpy_object(ctx, r, depth + 1)))
        for v in values
    )


class TensorFromNumpy(Rule):
    """`torch.tensor(array)` always allocates and copies. `torch.from_numpy(array)` shares
    the array's memory (no copy), and `torch.as_tensor` copies only when the dtype or
    device asks for it. Keep `torch.tensor` where you need an independent copy."""

    code = "PTT014"
    name = "tensor-from-numpy-copy"
    severity = "warning"
    message = (
        "`torch.tensor(<NumPy array>)` copies the data: use `torch.from_numpy` or `torch.as_tensor`"
    )
    tip = "from-numpy-no-copy"
    VALID = (
        "import numpy as np\nimport torch\nx = torch.from_numpy(np.load('x.npy'))\n",
        "import torch\nx = torch.tensor([1.0, 2.0])\ny = torch.tensor(values)\n",
        "import numpy as np\nimport torch\nnoise = np.random.rand()\nz = torch.tensor(noise)\n",
    )
    INVALID = (
        "import numpy as np\nimport torch\nfeatures = np.load('x.npy').astype(np.float32)\n"
        "x = torch.tensor(features)\n",
        "import numpy as np\nimport torch\nrng = np.random.default_rng(0)\n"
        "labels = rng.integers(0, 10, size=100)\ny = torch.tensor(labels)\n",
        "import numpy\nimport torch\nx = torch.Tensor(numpy.asarray(rows))\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        names = ("torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor")
        for call in ctx.calls(*names):
            if call.args and _numpy_array(ctx, call.args[0]):
                yield Report(call)


_FACTORIES = {
    "zeros",
    "ones",
    "empty",
    "full",
    "eye",
    "tensor",
    "arange",
    "linspace",
    "logspace",
    "rand",
    "randn",
    "randint",
    "randperm",
    "normal",
}
#: Factories whose values are identical wherever they are made: the fix may move them.
_EXACT = {"zeros", "ones", "empty", "full", "eye", "tensor"}


_DTYPE_NAMES = {
    "float",
    "float16",
    "float32",
    "float64",
    "half",
    "bfloat16",
    "double",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "long",
    "uint8",
    "bool",
    "short",
    "complex64",
    "complex128",
}


def _device_of(ctx: Context, call: ast.Call) -> tuple[bool, str | None]:
    """Whether ``x.to(...)``/``x.cuda()`` moves ``x`` to a device, and the source of that
    device when the call does nothing else (so the fix can move it into the factory)."""
    if method_name(call) == "cuda":
        return True, ('"cuda"' if not call.args and not call.keywords else None)
    if method_name(call) != "to":
        return False, None
    device_kw = kwarg(call, "device")
    arg = device_kw.value if device_kw is not None else (call.args[0] if call.args else None)
    if arg is None:
        return False, None
    q = ctx.qualname(arg) or ""
    if q.startswith("torch.") and q.removeprefix("torch.") in _DTYPE_NAMES:
        return False, None
    name = last_name(arg)
    device_like = (
        device_kw is not None
        or (
            isinstance(arg, ast.Constant)
            and isinstance(arg.value, str)
            and arg.value.split(":")[0] in {"cuda", "cpu", "mps", "xpu", "meta"}
        )
        or (
            name is not None and ("device" in name.lower() or name in {"dev", "rank", "local_rank"})
        )
        or (isinstance(arg, ast.Call) and ctx.qualname(arg.func) == "torch.device")
    )
    if not device_like:
        return False, None
    only = len(call.args) + len(call.keywords) == 1
    return True, (ctx.segment(arg) if only else None)


class FactoryThenMove(Rule):
    """`torch.randn(...).to(device)` first fills a tensor in host memory, then copies it
    to the device. Factory functions take `device=`: the tensor is made where it is used,
    with no host allocation and no copy. The fix moves `device` into the call for factories
    whose values do not depend on where they are made (`zeros`, `ones`, `full`, `empty`,
    `eye`, `tensor`); random factories draw from the device's generator instead, so those
    are reported without a fix."""

    code = "PTT015"
    name = "factory-then-move"
    severity = "warning"
    message = "tensor created on the CPU and then moved: pass `device=` to the factory"
    tip = "create-tensors-on-device"
    fixable = True
    fix_safety = "safe"
    VALID = (
        "import torch\nx = torch.randn(8, 4, device=device)\nm = Net().to(device)\n",
        "import torch\nx = torch.zeros(3).to(torch.float16)\ny = x.to(device)\n",
    )
    INVALID = (
        Invalid(
            "import torch\nmask = torch.zeros(8, dtype=torch.bool).to(device)\n",
            "import torch\nmask = torch.zeros(8, dtype=torch.bool, device=device)\n",
        ),
        Invalid(
            "import torch\nidx = torch.tensor([0, 1, 2]).cuda()\n",
            'import torch\nidx = torch.tensor([0, 1, 2], device="cuda")\n',
        ),
        "import torch\nnoise = torch.rand(4, 4).to(device)\n",
        "import torch\nx = torch.randn(4, 4).to(device, non_blocking=True)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for call in ctx.methods("to", "cuda"):
            inner = receiver(call)
            if not isinstance(inner, ast.Call):
                continue
            moves, device = _device_of(ctx, call)
            if not moves:
                continue
            q = ctx.qualname(inner.func) or ""
            factory = q.removeprefix("torch.")
            if not q.startswith("torch.") or factory not in _FACTORIES:
                continue
            edits: list[Edit] = []
            if (
                device is not None
                and factory in _EXACT
                and kwarg(inner, "device") is None
                and not has_star_kwargs(inner)
            ):
                edits = [
                    add_keyword(ctx.lines, inner, f"device={device}"),
                    Edit(end_of(inner), end_of(call), ""),
                ]
            yield Report(call, edits)


def _dataset_in_memory(ctx: Context, call: ast.Call) -> bool:
    dataset = call.args[0] if call.args else getattr(kwarg(call, "dataset"), "value", None)
    in_memory = {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}
    if isinstance(dataset, ast.Call):
        return ctx.qualname(dataset.func) in in_memory
    if isinstance(dataset, ast.Name):
        return ctx.assigned_from(dataset.id, in_memory)
    return False


class DataLoaderNoWorkers(Rule):
    """With the default `num_workers=0` the training process itself loads, decodes and
    augments every batch while the GPU waits. Worker processes prepare batches in
    parallel. Data that is already a tensor in memory (a `TensorDataset`) gains little
    from workers: index it directly instead. Reported only in files that train on CUDA."""

    code = "PTT016"
    name = "dataloader-no-workers"
    severity = "info"
    message = "`DataLoader` without `num_workers` loads every batch in the training process (fine for in-memory tensors)"
    tip = "dataloader-num-workers"
    VALID = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=64, num_workers=8, pin_memory=True)\n"
        "model.cuda()\nfor x, y in loader:\n    f(x, y).backward()\n",
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds)\n"
        "for x, y in loader:\n    f(x, y).backward()\n",
    )
    INVALID = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ImageFolder(root), batch_size=64, shuffle=True, pin_memory=True)\n"
        "model = Net().cuda()\nfor x, y in loader:\n    loss = f(model(x.cuda()), y.cuda())\n"
        "    loss.backward()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        if not ctx.trains_on_cuda:
            return
        for call in ctx.calls(*_DATALOADER):
            if has_star_kwargs(call) or len(call.args) > 1 or kwarg(call, "num_workers"):
                continue
            if not _dataset_in_memory(ctx, call):
                yield Report(call)


class DataLoaderNoPinMemory(Rule):
    """Batches in ordinary pageable memory are copied to the GPU through a staging buffer
    while the host waits, even with `non_blocking=True`. `pin_memory=True` has the
    `DataLoader` return page-locked batches, whose copies can overlap with compute.
    Reported only in files that train on CUDA."""

    code = "PTT017"
    name = "dataloader-no-pin-memory"
    severity = "info"
    message = "`DataLoader` without `pin_memory=True` while training on CUDA: host-to-device copies cannot overlap compute"
    tip = "pin-memory-non-blocking"
    VALID = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=64, num_workers=8, pin_memory=True)\n"
        "model.cuda()\nfor x, y in loader:\n    f(x, y).backward()\n",
    )
    INVALID = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=64, num_workers=4)\n"
        'device = torch.device("cuda")\nfor x, y in loader:\n'
        "    x = x.to(device, non_blocking=True)\n    f(x, y).backward()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        if not ctx.trains_on_cuda:
            return
        for call in ctx.calls(*_DATALOADER):
            if has_star_kwargs(call) or len(call.args) > 7 or kwarg(call, "pin_memory"):
                continue
            yield Report(call)


class DistributedSamplerSetEpoch(Rule):
    """A `DistributedSampler` shuffles with a seed derived from its epoch, which only
    `sampler.set_epoch(epoch)` changes: without it every epoch visits the data in the same
    order. Call it at the start of each epoch, before iterating the loader."""

    code = "PTT018"
    name = "distributed-sampler-set-epoch"
    severity = "error"
    message = "`DistributedSampler` without `set_epoch(epoch)`: every epoch repeats the same order"
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
            isinstance(loop, ast.For) and "epoch" in ast.unparse(loop.target).lower()
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
            holder = ctx.parent(ctx.parent(holder))  # type: ignore[arg-type]
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
            it = node.iter  # type: ignore[attr-defined]
            if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(it)) and any(
                isinstance(a, ast.For | ast.While) for a in ctx.ancestors(node)
            ):
                return True
        return False
