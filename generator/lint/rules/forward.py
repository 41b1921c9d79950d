"""What the forward pass computes and what it keeps for backward."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule
from generator.lint.syntax import has_star_kwargs, is_const, kwarg, method_name, receiver

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
                and isinstance(recv := receiver(stmt.value), ast.Name)
                and recv.id in saved
            ):
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
        "手写的注意力（`softmax(q @ k.transpose(-2, -1) / sqrt(d)) @ v`）要多次读写完整的 L × L 得分矩阵，"
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


class CheckpointUseReentrant(Rule):
    """`torch.utils.checkpoint.checkpoint` without `use_reentrant` warns, and PyTorch
    has announced it will raise: pass it explicitly. `use_reentrant=False` is the
    recommended variant (it supports keyword arguments, `torch.autograd.grad` and inputs
    that do not require grad); the default is still the old reentrant one."""

    code = "PTT045"
    name = "checkpoint-use-reentrant"
    severity = "error"
    message = "activation checkpoint without `use_reentrant`: pass `use_reentrant=False`"
    message_zh = (
        "调用 `checkpoint` 做激活重计算时没有传 `use_reentrant`：请传 `use_reentrant=False`"
    )
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
