"""What the forward pass computes, in which precision, and what it keeps for backward."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule
from generator.lint.rules.model import _is_module_call
from generator.lint.syntax import dotted, has_star_kwargs, is_const, kwarg, method_name, receiver

_SAVES_OUTPUT = {
    "torch.sigmoid",
    "torch.tanh",
    "torch.exp",
    "torch.softmax",
    "torch.relu",
    "torch.nn.functional.softmax",
    "torch.nn.functional.log_softmax",
    "torch.nn.functional.relu",
    "torch.nn.functional.sigmoid",
    "torch.nn.functional.tanh",
    "torch.log_softmax",
}
_SAVES_OUTPUT_METHODS = {"sigmoid", "tanh", "exp", "softmax", "log_softmax", "relu"}
_INPLACE = {
    "add_",
    "sub_",
    "mul_",
    "div_",
    "pow_",
    "clamp_",
    "clamp_min_",
    "clamp_max_",
    "masked_fill_",
    "copy_",
    "zero_",
    "fill_",
    "exp_",
    "sigmoid_",
    "tanh_",
    "relu_",
    "neg_",
    "abs_",
    "sqrt_",
    "addcmul_",
    "addcdiv_",
    "scatter_",
    "index_fill_",
}


def _saves_output(ctx: Context, value: ast.AST) -> bool:
    if not isinstance(value, ast.Call):
        return False
    q = ctx.qualname(value.func)
    if q in _SAVES_OUTPUT:
        return not is_const(getattr(kwarg(value, "inplace"), "value", None), True)
    return method_name(value) in _SAVES_OUTPUT_METHODS and q is None


class InplaceOnSavedOutput(Rule):
    """`sigmoid`, `tanh`, `exp`, `softmax` and `relu` save their *output* for the backward
    pass. Modifying that output in place (`g.mul_(...)`, `g += ...`) overwrites what
    backward needs, and `backward()` fails with "one of the variables needed for gradient
    computation has been modified by an inplace operation". Use the out-of-place form."""

    code = "PTT042"
    name = "inplace-on-saved-output"
    severity = "error"
    message = (
        "in-place change of an output that autograd saved for backward: use the out-of-place op"
    )
    message_zh = "对自动求导为反向传播保存的输出做了原地修改：请改用非原地的运算"
    why_zh = (
        "`sigmoid`、`tanh`、`exp`、`softmax` 和 `relu` 会为反向传播保存自己的*输出*。原地修改这个输出"
        "（`g.mul_(...)`、`g += ...`）会覆盖反向传播需要的值，`backward()` 随即报错：“one of the variables"
        " needed for gradient computation has been modified by an inplace operation”。请改用非原地的写法。"
    )
    tip = "inplace-operations"
    VALID = (
        "import torch\nfrom torch import nn\n\nclass Gate(nn.Module):\n    def forward(self, x):\n"
        "        g = torch.sigmoid(x)\n        out = g * x\n        out += x\n        return out\n",
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Gate(nn.Module):\n    def forward(self, x):\n"
            "        g = torch.sigmoid(self.gate(x))\n        g.mul_(self.proj(x))\n        return g\n",
            instead="import torch\nfrom torch import nn\n\nclass Gate(nn.Module):\n"
            "    def forward(self, x):\n        g = torch.sigmoid(self.gate(x))\n"
            "        return g * self.proj(x)\n",
        ),
        "import torch.nn.functional as F\nfrom torch import nn\n\nclass Block(nn.Module):\n"
        "    def forward(self, x):\n        out = F.relu(self.conv(x))\n        out += x\n        return out\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for func in ctx.functions_named("forward"):
            yield from self._block(ctx, func.body)
            for node in ast.walk(func):
                for name in ("body", "orelse"):
                    inner = getattr(node, name, None)
                    if (
                        node is not func
                        and isinstance(inner, list)
                        and inner
                        and isinstance(inner[0], ast.stmt)
                    ):
                        yield from self._block(ctx, inner)

    def _block(self, ctx: Context, block: list[ast.stmt]) -> Iterator[Report]:
        saved: set[str] = set()
        for stmt in block:
            if (
                isinstance(stmt, ast.AugAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.target.id in saved
            ):
                yield Report(stmt)
            elif (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Call)
                and method_name(stmt.value) in _INPLACE
                and isinstance(receiver(stmt.value), ast.Name)
                and receiver(stmt.value).id in saved
            ):  # type: ignore[union-attr]
                yield Report(stmt.value)
            if isinstance(stmt, ast.Assign):
                names = {t.id for t in stmt.targets if isinstance(t, ast.Name)}
                saved -= names
                if len(stmt.targets) == 1 and names and _saves_output(ctx, stmt.value):
                    saved |= names


class ManualAttention(Rule):
    """Hand-written attention (`softmax(q @ k.transpose(-2, -1) / sqrt(d)) @ v`) reads and
    writes the full L x L score matrix several times and keeps it for backward.
    `F.scaled_dot_product_attention` picks a fused kernel (FlashAttention,
    memory-efficient, cuDNN) that never materialises it, and supports causal masks with
    `is_causal=True`."""

    code = "PTT043"
    name = "manual-attention"
    severity = "warning"
    message = "hand-written attention: use `torch.nn.functional.scaled_dot_product_attention`"
    message_zh = "手写的注意力：请改用 `torch.nn.functional.scaled_dot_product_attention`"
    why_zh = (
        "手写的注意力（`softmax(q @ k.transpose(-2, -1) / sqrt(d)) @ v`）要多次读写完整的 L x L 分数矩阵，"
        "还要为反向传播保存它。`F.scaled_dot_product_attention` 会选用融合的 kernel（FlashAttention、"
        "memory-efficient、cuDNN），从不把这个矩阵完整地存下来，并通过 `is_causal=True` 支持因果掩码。"
    )
    tip = "sdpa-attention"
    VALID = (
        "import torch.nn.functional as F\n\ndef attention(q, k, v):\n"
        "    return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n",
        "import math\nimport torch.nn.functional as F\n\ndef attention(q, k, v, flash):\n    if flash:\n"
        "        return F.scaled_dot_product_attention(q, k, v)\n"
        "    att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))\n    return att.softmax(-1) @ v\n",
    )
    INVALID = (
        "import math\n\ndef attention(q, k, v):\n    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))\n"
        "    weights = scores.softmax(dim=-1)\n    return weights @ v\n",
        "import torch\n\ndef attn(q, k, v):\n    w = torch.softmax(torch.matmul(q, k.transpose(1, 2)), dim=-1)\n"
        "    return torch.matmul(w, v)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        softmaxes = [
            *ctx.methods("softmax"),
            *ctx.calls("torch.softmax", "torch.nn.functional.softmax"),
        ]
        funcs = {f for f in (ctx.enclosing_function(c) for c in softmaxes) if f is not None}
        for func in sorted(funcs, key=lambda f: f.lineno):
            nodes = list(ast.walk(func))
            if any(
                isinstance(n, ast.Attribute | ast.Name)
                and getattr(n, "attr", getattr(n, "id", None)) == "scaled_dot_product_attention"
                for n in nodes
            ):
                continue
            if not any(self._scores(ctx, n) for n in nodes):
                continue
            for n in nodes:
                if isinstance(n, ast.Call) and (
                    method_name(n) == "softmax"
                    or ctx.qualname(n.func) in {"torch.softmax", "torch.nn.functional.softmax"}
                ):
                    yield Report(n)
                    break

    @staticmethod
    def _scores(ctx: Context, node: ast.AST) -> bool:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            right = node.right
        elif (
            isinstance(node, ast.Call)
            and ctx.qualname(node.func) in {"torch.matmul", "torch.bmm"}
            and len(node.args) == 2
        ):
            right = node.args[1]
        else:
            return False
        return (isinstance(right, ast.Call) and method_name(right) in {"transpose", "permute"}) or (
            isinstance(right, ast.Attribute) and right.attr in {"mT", "T"}
        )


_LOW = {"torch.float16", "torch.half", "torch.bfloat16"}


class HalfModelTraining(Rule):
    """Casting the model itself to fp16/bf16 (`model.half()`, `model.to(torch.bfloat16)`)
    puts the weights, the gradients and every optimizer update in low precision: updates
    smaller than half a unit in the last place are rounded away and those weights stop
    moving. Keep the weights in float32 and run the forward pass under `torch.autocast`.
    A round trip (`model.half().float()`, the weights stay float32) and a frozen module used
    only for inference (`requires_grad_(False)` on it, or `.eval()` with its parameters given
    to no optimizer, such as a text encoder cast to bf16 beside the model being trained) are
    not reported."""

    code = "PTT044"
    name = "half-model-training"
    severity = "warning"
    message = (
        "model cast to fp16/bf16 before training: keep float32 weights and use `torch.autocast`"
    )
    message_zh = "训练前把模型转换成了 fp16/bf16：请保持 float32 权重，用 `torch.autocast`"
    why_zh = (
        "把模型本身转换成 fp16/bf16（`model.half()`、`model.to(torch.bfloat16)`），权重、梯度和每一次"
        "优化器更新都会变成低精度：小于最后一位一半的更新会被舍入掉，这些权重从此不再变化。请保持 float32"
        " 权重，在 `torch.autocast` 下运行前向传播。往返转换（`model.half().float()`）以及冻结的、只做推理"
        "的模块（调用了 `requires_grad_(False)`，或者调用了 `.eval()` 而参数从未交给优化器，例如转换成"
        " bf16 的文本编码器）不会报告。"
    )
    tip = "autocast-mixed-precision"
    VALID = (
        "import torch\nfor x in data:\n    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "        loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n"
        "model.half()\n",
        "import torch\nx = x.to(torch.bfloat16)\nfor b in data:\n    model(b).sum().backward()\n",
        # a round trip, as yolov5 writes it: the weights stay float32
        "import torch\nmodel = model.half().float()\nfor x in data:\n    model(x).sum().backward()\n"
        "    optimizer.step()\n",
        # a loss module has no weights to cast
        "import torch\nfrom torch import nn\ncriterion = nn.CrossEntropyLoss().cuda()\ncriterion.half()\n"
        "for x, y in data:\n    criterion(model(x), y).backward()\n    optimizer.step()\n",
        # a frozen encoder cast for inference only, beside the model that trains
        "import torch\ntext_encoder.requires_grad_(False)\ntext_encoder.to(device, dtype=torch.bfloat16)\n"
        "vae_model.eval()\nvae_model.half()\nfor batch in loader:\n"
        "    loss = unet(batch, text_encoder(batch.ids)).mean()\n    loss.backward()\n"
        "    optimizer.step()\n",
    )
    INVALID = (
        Invalid(
            "import torch\nmodel.to(torch.bfloat16)\nfor x in data:\n    model(x).sum().backward()\n"
            "    optimizer.step()\n",
            instead="import torch\nfor x in data:\n    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
            "        loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n",
        ),
        "import torch\nnet = Net().cuda().half()\nfor x in data:\n    net(x).sum().backward()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        if not ctx.training_loops:
            return
        last = max(loop.lineno for loop in ctx.training_loops)
        frozen = self._frozen_names(ctx)
        for call in ctx.methods("half", "bfloat16", "to"):
            if call.lineno > last:
                continue
            name = method_name(call)
            if name == "to":
                arg = (
                    call.args[0]
                    if len(call.args) == 1
                    else getattr(kwarg(call, "dtype"), "value", None)
                )
                if arg is None or ctx.qualname(arg) not in _LOW:
                    continue
            elif call.args or call.keywords:
                continue
            recv = receiver(call)
            while isinstance(recv, ast.Call) and method_name(recv) in {"to", "cuda", "cpu"}:
                recv = receiver(recv)
            parent = ctx.parent(call)
            target = (
                parent.targets[0]
                if isinstance(parent, ast.Assign) and len(parent.targets) == 1
                else None
            )
            if (
                self._round_trip(ctx, call)
                or self._frozen(ctx, recv, frozen)
                or self._loss_module(ctx, recv)
            ):
                continue
            if (
                recv is not None
                and (
                    ctx.name_is_module(recv)
                    or (isinstance(recv, ast.Call) and _is_module_call(ctx, recv))
                )
            ) or (target is not None and ctx.name_is_module(target)):
                yield Report(call)

    @staticmethod
    def _loss_module(ctx: Context, recv: ast.AST | None) -> bool:
        """A loss function (``criterion = nn.CrossEntropyLoss()``): it has no weights."""
        name = dotted(recv) if recv is not None else None
        if name is None:
            return False
        if re.search(r"criterion|loss", name.rsplit(".", 1)[-1], re.I):
            return True
        return isinstance(recv, ast.Name) and any(
            (q := ctx.qualname(v.func) or "").startswith("torch.nn.") and q.endswith("Loss")
            for v in ctx.assignments.get(recv.id, ())
            if isinstance(v, ast.Call)
        )

    @staticmethod
    def _round_trip(ctx: Context, call: ast.Call) -> bool:
        """``model.half().float()``: cast back to float32 straight away."""
        parent = ctx.parent(call)
        outer = ctx.parent(parent) if isinstance(parent, ast.Attribute) else None
        if not (isinstance(parent, ast.Attribute) and isinstance(outer, ast.Call)):
            return False
        if parent.attr == "float":
            return True
        return parent.attr == "to" and any(
            ctx.qualname(a) in {"torch.float32", "torch.float"}
            for a in [*outer.args, *(k.value for k in outer.keywords)]
        )

    @staticmethod
    def _frozen_names(ctx: Context) -> set[str]:
        """Modules frozen for inference: ``x.requires_grad_(False)``, ``p.requires_grad =
        False`` over ``x.parameters()``, or ``x.eval()`` where ``x.parameters()`` is never
        taken (so no optimizer trains it)."""
        out: set[str] = set()
        trained = {
            dotted(receiver(c))  # type: ignore[arg-type]
            for c in ctx.methods("parameters", "named_parameters")
        }
        for call in ctx.methods("requires_grad_", "eval", "train"):
            name = method_name(call)
            flag = call.args[0] if call.args else None
            text = dotted(receiver(call))  # type: ignore[arg-type]
            if text and (
                (name == "requires_grad_" and is_const(flag, False))
                # evaluation mode, and its parameters go to no optimizer: inference only
                or (name == "eval" and not call.args and text not in trained)
                or (name == "train" and is_const(flag, False) and text not in trained)
            ):
                out.add(text)
        for loop in ctx.by_type[ast.For]:
            assert isinstance(loop, ast.For)
            if (
                isinstance(loop.iter, ast.Call)
                and method_name(loop.iter) == "parameters"
                and any(
                    isinstance(n, ast.Assign)
                    and any(
                        isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                        for t in n.targets
                    )
                    and is_const(n.value, False)
                    for n in ast.walk(loop)
                )
            ):
                text = dotted(receiver(loop.iter))  # type: ignore[arg-type]
                if text:
                    out.add(text)
        return out

    @staticmethod
    def _frozen(ctx: Context, recv: ast.AST | None, frozen: set[str]) -> bool:
        return recv is not None and dotted(recv) in frozen


class CheckpointUseReentrant(Rule):
    """`torch.utils.checkpoint.checkpoint` without `use_reentrant` warns, and PyTorch
    has announced it will raise: pass it explicitly. `use_reentrant=False` is the
    recommended variant (it supports keyword arguments, `torch.autograd.grad` and inputs
    that do not require grad); the default is still the old reentrant one."""

    code = "PTT045"
    name = "checkpoint-use-reentrant"
    severity = "error"
    message = "activation checkpoint without `use_reentrant`: pass `use_reentrant=False`"
    message_zh = "激活重计算没有传 `use_reentrant`：请传 `use_reentrant=False`"
    why_zh = (
        "`torch.utils.checkpoint.checkpoint` 不传 `use_reentrant` 时会发出警告，PyTorch 已宣布将来会直接"
        "报错：请显式传入。推荐用 `use_reentrant=False`（它支持关键字参数、`torch.autograd.grad` 以及不需要"
        "梯度的输入）；默认值仍是旧的可重入实现。"
    )
    tip = "activation-checkpointing"
    VALID = (
        "from torch.utils.checkpoint import checkpoint\ny = checkpoint(block, x, use_reentrant=False)\n",
    )
    INVALID = (
        "from torch.utils.checkpoint import checkpoint\ny = checkpoint(block, x)\n",
        "import torch\ny = torch.utils.checkpoint.checkpoint_sequential(layers, 2, x)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        names = (
            "torch.utils.checkpoint.checkpoint",
            "torch.utils.checkpoint.checkpoint_sequential",
        )
        for call in ctx.calls(*names):
            if kwarg(call, "use_reentrant") is None and not has_star_kwargs(call):
                yield Report(call)
