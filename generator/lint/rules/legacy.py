"""Habits from before PyTorch 0.4 and its typed tensors: `Variable`, `.data`, legacy tensor
types used as constructors and device moves."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule
from generator.lint.syntax import method_name


class AutogradVariable(Rule):
    """`torch.autograd.Variable` has been a no-op wrapper since PyTorch 0.4: tensors carry
    `requires_grad` themselves, and `volatile=True` no longer does anything (use
    `torch.no_grad()`)."""

    code = "PTT006"
    name = "autograd-variable"
    severity = "info"
    message = "`Variable` is a no-op since PyTorch 0.4: use the tensor itself (with `requires_grad=True` where needed)"
    message_zh = "`Variable` 从 PyTorch 0.4 起已不起任何作用：直接使用张量本身（需要时加上 `requires_grad=True`）"
    why_zh = (
        "从 PyTorch 0.4 起，`torch.autograd.Variable` 只是一个什么也不做的包装：张量自己就带有"
        " `requires_grad`，而 `volatile=True` 也不再有任何效果（请改用 `torch.no_grad()`）。"
    )
    tip = "variable-is-gone"
    VALID = ("import torch\nx = torch.zeros(3, requires_grad=True)\n",)
    INVALID = (
        "import torch\nfrom torch.autograd import Variable\nx = Variable(torch.zeros(3), requires_grad=True)\n",
        "import torch\nx = torch.autograd.Variable(batch).cuda()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for call in ctx.calls("torch.autograd.Variable", "torch.autograd.variable.Variable"):
            yield Report(call)


_INPLACE_EXEMPT = {"requires_grad_", "share_memory_", "retain_grad_"}
#: Casts that return the same values in another dtype or on another device.
_CASTS = {"to", "half", "float", "bfloat16", "double", "cuda", "cpu", "type", "contiguous"}
#: Attributes that are tensors whatever their owner is.
_TENSOR_ATTRS = {"grad", "weight", "bias"}


def _parameter_names(ctx: Context) -> set[str]:
    """Names a ``for`` loop binds to parameters: ``p`` in ``for p in model.parameters()``,
    ``name, p`` over ``named_parameters()``, both sides of a ``zip`` of such calls."""
    out: set[str] = set()
    for loop in ctx.by_type[ast.For]:
        assert isinstance(loop, ast.For)
        if not any(
            isinstance(n, ast.Call) and method_name(n) in {"parameters", "named_parameters"}
            for n in ast.walk(loop.iter)
        ):
            continue
        out |= {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    return out


class TensorData(Rule):
    """Writing through `.data` changes a tensor behind autograd's back: no version-counter
    check, so a value that backward still needs can be overwritten silently. Update
    parameters under `torch.no_grad()`, initialise them with `nn.init` (which already runs
    without grad), and use `.detach()` to read a value without its graph. Reported only
    where the owner of `.data` is shown to be a tensor (a gradient, a weight, a parameter, the
    loss, an in-place tensor method), so `args.data` or a dataset's `.data` is left alone.
    Two uses are left alone as well: casting a parameter in place through its own `.data`
    (`m.weight.data = m.weight.data.bfloat16()`, the idiom `nn.Module._apply` uses), and
    reading `.data` under `torch.no_grad()` or `torch.inference_mode()`, where there is no
    graph to bypass."""

    code = "PTT007"
    name = "tensor-data"
    severity = "info"
    message = "`.data` bypasses autograd's checks: use `.detach()`, or `torch.no_grad()` for in-place updates"
    message_zh = (
        "`.data` 会绕过自动求导的检查：读取值用 `.detach()`，原地更新放在 `torch.no_grad()` 里"
    )
    why_zh = (
        "通过 `.data` 写入，是在自动求导不知情的情况下修改张量：版本计数器不做检查，反向传播还要用到的值"
        "可能被悄悄覆盖。更新参数请放在 `torch.no_grad()` 下，初始化参数用 `nn.init`（它本身就不记录梯度），"
        "读取不带计算图的值用 `.detach()`。只有当 `.data` 的主体能确认是张量时（梯度、权重、参数、损失，"
        "或者后面跟着张量的原地方法）才会报告，所以 `args.data` 或数据集的 `.data` 不受影响。另有两种用法"
        "不会报告：通过参数自己的 `.data` 原地转换它（`m.weight.data = m.weight.data.bfloat16()`，"
        "`nn.Module._apply` 本身就是这样做的），以及在 `torch.no_grad()` 或 `torch.inference_mode()` 下"
        "读取 `.data`：那里没有计算图可绕过。"
    )
    tip = "variable-is-gone"
    VALID = (
        "import torch\nwith torch.no_grad():\n    w -= lr * w.grad\nlast = loss.detach()\n",
        "import torch\nx = dataset.data\nn = len(batch.data)\n",
        "class Rows:\n    def __init__(self, rows):\n        self.data = rows\n        self.data += [0]\n",
        # an argparse field, as in yolov5's train.py: not Tensor.data
        "import argparse\nopt = argparse.ArgumentParser().parse_args()\n"
        "opt.data = check_file(opt.data)\n",
        # a cast in place, as nn.Module._apply does it: the parameter keeps its identity
        "import torch\nfrom torch import nn\n\ndef to_bf16(m):\n    if isinstance(m, nn.Linear):\n"
        "        m.weight.data = m.weight.data.bfloat16()\n        m.bias.data = m.bias.data.to(torch.bfloat16)\n\n"
        "model.apply(to_bf16)\n",
        # read under inference_mode: there is no graph to bypass
        "import torch\nfor x, y in loader:\n    loss = f(model(x), y)\n    loss.backward()\n    optimizer.step()\n"
        "with torch.inference_mode():\n    for x, y in val_loader:\n        loss = f(model(x), y)\n"
        "        totals.append(loss.data)\n",
    )
    INVALID = (
        Invalid(
            "import torch\nw.data -= lr * w.grad\n",
            instead="import torch\nwith torch.no_grad():\n    w -= lr * w.grad\n",
        ),
        "import torch\nw.grad.data.zero_()\n",
        "import torch\nfrom torch import nn\nnn.init.kaiming_normal_(m.weight.data)\n",
        "import torch\nfor x, y in data:\n    loss = f(x, y)\n    loss.backward()\n    last = loss.data\n",
        "import torch\nm.weight.data.normal_(0.0, 0.02)\n",
        "import torch\nfor p, q in zip(model.parameters(), ema.parameters()):\n"
        "    q.data = 0.99 * q.data + 0.01 * p.data\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        losses: set[str] = set()
        for loop in ctx.loops.training_loops:
            losses |= ctx.loops.loss_names(loop)
        tensors = losses | _parameter_names(ctx)
        for node in ctx.by_type[ast.Attribute]:
            assert isinstance(node, ast.Attribute)
            if node.attr != "data" or not isinstance(node.ctx, ast.Load | ast.Store):
                continue
            parent = ctx.parent(node)
            value = node.value
            if isinstance(value, ast.Name) and value.id in {"self", "cls"}:
                continue  # a Dataset's own `self.data` attribute, not Tensor.data
            owner_is_tensor = (
                isinstance(value, ast.Attribute) and value.attr in _TENSOR_ATTRS
            ) or (isinstance(value, ast.Name) and value.id in tensors)
            if isinstance(node.ctx, ast.Store) and self._casts_itself(node, parent):
                continue  # m.weight.data = m.weight.data.bfloat16(): nn.Module._apply's idiom
            if isinstance(node.ctx, ast.Load) and self._plain_read(ctx, node, parent):
                continue  # read under no_grad/inference_mode: no graph to bypass
            hit = (
                (
                    # x.grad.data
                    isinstance(value, ast.Attribute) and value.attr == "grad"
                )
                or (
                    # w.data -= lr * w.grad / p.data = ... where w, p are shown to be tensors
                    isinstance(node.ctx, ast.Store)
                    and isinstance(parent, ast.AugAssign | ast.Assign)
                    and (owner_is_tensor or self._tensor_value(ctx, parent.value))
                )
                or (
                    # w.data.zero_()
                    isinstance(parent, ast.Attribute)
                    and parent.attr.endswith("_")
                    and not parent.attr.endswith("__")
                    and parent.attr not in _INPLACE_EXEMPT
                    and isinstance(ctx.parent(parent), ast.Call)
                )
                or (
                    # nn.init.xxx_(m.weight.data)
                    isinstance(parent, ast.Call)
                    and node in parent.args
                    and (ctx.qualname(parent.func) or "").startswith("torch.nn.init.")
                )
                or (isinstance(value, ast.Name) and value.id in losses)  # last = loss.data
            )
            if hit:
                yield Report(node)

    @staticmethod
    def _casts_itself(node: ast.Attribute, parent: ast.AST | None) -> bool:
        """``x.data = x.data.<cast>()``: a dtype or device cast of the same tensor."""
        if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1):
            return False
        value = parent.value
        if not (isinstance(value, ast.Call) and method_name(value) in _CASTS):
            return False
        recv = value.func.value if isinstance(value.func, ast.Attribute) else None
        return recv is not None and ast.dump(recv) == ast.dump(
            ast.Attribute(value=node.value, attr="data", ctx=ast.Load())
        )

    @staticmethod
    def _plain_read(ctx: Context, node: ast.Attribute, parent: ast.AST | None) -> bool:
        """A read of ``x.data`` (not an in-place method on it, not ``nn.init``'s argument)
        under ``no_grad``/``inference_mode``."""
        if isinstance(parent, ast.Attribute) and parent.attr.endswith("_"):
            return False
        if isinstance(parent, ast.Call) and (ctx.qualname(parent.func) or "").startswith(
            "torch.nn.init."
        ):
            return False
        return ctx.in_no_grad(node)

    @staticmethod
    def _tensor_value(ctx: Context, value: ast.AST) -> bool:
        """Whether an assigned value is shown to be a tensor: it reads a gradient or calls
        torch."""
        return any(
            (isinstance(n, ast.Attribute) and n.attr == "grad")
            or (isinstance(n, ast.Call) and (ctx.qualname(n.func) or "").startswith("torch."))
            for n in ast.walk(value)
        )


#: The legacy tensor classes by dtype name (``torch.FloatTensor``, ``torch.cuda.LongTensor``).
_TYPES = (
    "Float",
    "Double",
    "Half",
    "BFloat16",
    "Byte",
    "Char",
    "Short",
    "Int",
    "Long",
    "Bool",
    "ComplexFloat",
    "ComplexDouble",
)
LEGACY_TYPES = {f"torch.{t}Tensor" for t in _TYPES} | {f"torch.cuda.{t}Tensor" for t in _TYPES}


class LegacyTensorType(Rule):
    """The typed tensor classes (`torch.FloatTensor`, `torch.cuda.LongTensor`, ...) are
    constructors from before PyTorch 0.4 gave every tensor a `dtype` and a `device`. Called
    with sizes they return uninitialised memory (`torch.LongTensor(3)` holds three arbitrary
    integers, not the number 3); the CUDA ones warn that they are no longer recommended and
    fix the device type in the code; and `x.type(torch.cuda.FloatTensor)` hides a
    host-to-device copy inside a cast. `torch.tensor(data, dtype=..., device=...)`, the factory
    functions (`torch.zeros(..., device=...)`) and `x.to(device, dtype)` say what they do, and
    take the device from one variable. The bare `torch.Tensor(...)` class is left alone."""

    code = "PTT053"
    name = "legacy-tensor-type"
    severity = "warning"
    message = "legacy tensor type `{name}(...)`: use `torch.tensor(data, dtype=..., device=...)` or a factory such as `torch.zeros(..., device=...)`"
    message_zh = "旧式张量类型 `{name}(...)`：请改用 `torch.tensor(data, dtype=..., device=...)`，或 `torch.zeros(..., device=...)` 这类工厂函数"
    message_args = {"name": "torch.cuda.FloatTensor"}
    variants = {
        "type": (
            "`.type({name})` casts and moves through a legacy tensor type: use `.to(device, dtype)`",
            "`.type({name})` 借助旧式张量类型转换 dtype 并搬运设备：请改用 `.to(device, dtype)`",
        )
    }
    why_zh = (
        "`torch.FloatTensor`、`torch.cuda.LongTensor` 这类带类型的张量类，是 PyTorch 0.4 让每个张量都有"
        " `dtype` 和 `device` 之前的构造方式。传入尺寸时，它们返回的是未初始化的内存（`torch.LongTensor(3)`"
        " 是三个任意的整数，而不是数字 3）；CUDA 版本会警告自己已不再推荐使用，并把设备类型写死在代码里；"
        "`x.type(torch.cuda.FloatTensor)` 则把一次主机到设备的拷贝藏在类型转换里。"
        "`torch.tensor(data, dtype=..., device=...)`、工厂函数（`torch.zeros(..., device=...)`）和"
        " `x.to(device, dtype)` 都写明了自己做什么，设备也只从一个变量取得。单独的 `torch.Tensor(...)`"
        " 不在检查范围内。"
    )
    tip = "legacy-tensor-types"
    VALID = (
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "labels = torch.zeros(64, dtype=torch.long, device=device)\n"
        "x = batch.to(device, torch.float32)\n",
        "import torch\nassert isinstance(x, torch.cuda.FloatTensor) or x.type() == 'torch.FloatTensor'\n"
        "w = torch.Tensor(4, 4)\n",
    )
    INVALID = (
        Invalid(
            "import torch\nlabels = torch.cuda.LongTensor(64).fill_(1)\n",
            instead="import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "labels = torch.ones(64, dtype=torch.long, device=device)\n",
        ),
        "import torch\nimgs = imgs.type(torch.cuda.FloatTensor)\n",
        "import torch\ncuda = torch.cuda.is_available()\n"
        "Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n"
        "valid = Tensor(imgs.size(0), 1).fill_(1.0)\nreal = imgs.type(Tensor)\n",
        "import torch\nidx = torch.LongTensor(order)\nx = x.type('torch.cuda.HalfTensor')\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for call in ctx.calls(*sorted(LEGACY_TYPES)):
            yield Report(call, args={"name": ctx.qualname(call.func) or ""})
        for call in ctx.methods("type"):
            if len(call.args) != 1 or call.keywords:
                continue
            arg = call.args[0]
            q = ctx.qualname(arg)
            if q in LEGACY_TYPES:
                yield Report(call, args={"name": ctx.segment(arg)}, variant="type")
            elif isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                if arg.value in LEGACY_TYPES:
                    yield Report(call, args={"name": repr(arg.value)}, variant="type")


_APEX_AMP = {"apex.amp.initialize", "apex.amp.scale_loss"}
_APEX_DDP = {
    "apex.parallel.DistributedDataParallel",
    "apex.parallel.convert_syncbn_model",
    "apex.parallel.SyncBatchNorm",
    "apex.parallel.distributed.DistributedDataParallel",
}


class ApexAmp(Rule):
    """NVIDIA apex's `amp` (`amp.initialize(model, optimizer, opt_level=...)`,
    `with amp.scale_loss(loss, optimizer)`) and `apex.parallel` (its
    `DistributedDataParallel`, `convert_syncbn_model`) were deprecated in 2022 and removed
    from apex in 2025: a script that imports them no longer runs with a current apex.
    PyTorch has the same features built in: `torch.autocast` with `torch.amp.GradScaler` for
    mixed precision (O1 is autocast; keep the weights in float32), and
    `torch.nn.parallel.DistributedDataParallel` with `nn.SyncBatchNorm.convert_sync_batchnorm`.
    Reported at each `amp.initialize` and each `apex.parallel` call, and at `amp.scale_loss`
    in a file that has no `amp.initialize`."""

    code = "PTT058"
    name = "apex-amp-ddp"
    severity = "error"
    message = (
        "NVIDIA apex `amp` was removed from apex: use `torch.autocast` with `torch.amp.GradScaler`"
    )
    message_zh = (
        "NVIDIA apex 的 `amp` 已从 apex 中移除：请改用 `torch.autocast` 配合 `torch.amp.GradScaler`"
    )
    message_args = {"name": "apex.parallel.DistributedDataParallel"}
    variants = {
        "ddp": (
            "`{name}` was removed from apex: use `torch.nn.parallel.DistributedDataParallel` (and `nn.SyncBatchNorm.convert_sync_batchnorm`)",
            "`{name}` 已从 apex 中移除：请改用 `torch.nn.parallel.DistributedDataParallel`（以及 `nn.SyncBatchNorm.convert_sync_batchnorm`）",
        )
    }
    why_zh = (
        "NVIDIA apex 的 `amp`（`amp.initialize(model, optimizer, opt_level=...)`、`with amp.scale_loss(loss,"
        " optimizer)`）和 `apex.parallel`（其中的 `DistributedDataParallel`、`convert_syncbn_model`）在 2022 年"
        "被弃用，2025 年已从 apex 中移除：导入它们的脚本在当前的 apex 上无法运行。PyTorch 已经内置了同样的功能："
        "混合精度用 `torch.autocast` 配合 `torch.amp.GradScaler`（O1 就是 autocast；权重保持 float32），分布式用"
        " `torch.nn.parallel.DistributedDataParallel` 配合 `nn.SyncBatchNorm.convert_sync_batchnorm`。在每个"
        " `amp.initialize` 和每个 `apex.parallel` 调用处报告；文件里没有 `amp.initialize` 时，在 `amp.scale_loss`"
        " 处报告。"
    )
    tip = "autocast-mixed-precision"
    VALID = (
        "import torch\nscaler = torch.amp.GradScaler('cuda')\nfor x, y in loader:\n"
        "    with torch.autocast('cuda', dtype=torch.float16):\n        loss = f(model(x), y)\n"
        "    scaler.scale(loss).backward()\n    scaler.step(optimizer)\n    scaler.update()\n",
        # a file of the project's own named `amp`, not apex
        "from mytools import amp\nmodel = amp.initialize(model)\n",
    )
    INVALID = (
        Invalid(
            "from apex import amp\nmodel, optimizer = amp.initialize(model, optimizer, opt_level='O1')\n"
            "for x, y in loader:\n    loss = f(model(x), y)\n"
            "    with amp.scale_loss(loss, optimizer) as scaled_loss:\n        scaled_loss.backward()\n"
            "    optimizer.step()\n",
            instead="import torch\nscaler = torch.amp.GradScaler('cuda')\nfor x, y in loader:\n"
            "    with torch.autocast('cuda', dtype=torch.float16):\n        loss = f(model(x), y)\n"
            "    scaler.scale(loss).backward()\n    scaler.step(optimizer)\n    scaler.update()\n",
        ),
        Invalid(
            "from apex.parallel import DistributedDataParallel, convert_syncbn_model\n"
            "model = convert_syncbn_model(model)\nmodel = DistributedDataParallel(model, delay_allreduce=True)\n",
            instead="import torch\nfrom torch import nn\nmodel = nn.SyncBatchNorm.convert_sync_batchnorm(model)\n"
            "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])\n",
        ),
        # the loop of a trainer whose script calls amp.initialize elsewhere
        "from apex import amp\nfor images, targets in loader:\n    losses = sum(model(images, targets).values())\n"
        "    with amp.scale_loss(losses, optimizer) as scaled_losses:\n        scaled_losses.backward()\n"
        "    optimizer.step()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        initialize = ctx.calls("apex.amp.initialize")
        yield from (Report(c) for c in initialize)
        if not initialize:
            yield from (Report(c) for c in ctx.calls("apex.amp.scale_loss")[:1])
        for call in ctx.calls(*sorted(_APEX_DDP)):
            name = (ctx.qualname(call.func) or "").replace(".distributed.", ".")
            yield Report(call, args={"name": name}, variant="ddp")
