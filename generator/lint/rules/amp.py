"""Mixed precision: the deprecated `torch.cuda.amp` namespace, and models cast to half
precision for training."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules import half
from generator.lint.rules.base import (
    Edit,
    Invalid,
    Report,
    Rule,
    add_keyword,
    after_last_argument,
    argument_start,
    insert,
    open_paren,
    replace,
)
from generator.lint.rules.model import _is_module_call
from generator.lint.syntax import (
    has_star_args,
    has_star_kwargs,
    kwarg,
    method_name,
    receiver,
)

_AMP_DEVICE = {"torch.cuda.amp": "cuda", "torch.cpu.amp": "cpu"}
#: What ``torch.{cuda,cpu}.amp.autocast`` pass when a call leaves them out.
_DEFAULTS = {
    "cuda": {"dtype": "torch.float16", "cache_enabled": "True"},
    "cpu": {"dtype": "torch.bfloat16", "cache_enabled": "True"},
}


def _device(qualname: str) -> str:
    return _AMP_DEVICE[qualname.rsplit(".", 1)[0]]


class CudaAmpAutocast(Rule):
    """`torch.cuda.amp.autocast` and `torch.cpu.amp.autocast` are deprecated aliases that
    emit a `FutureWarning`; `torch.amp.autocast(device_type, ...)` is the one API for every
    device. Their positional arguments differ (`enabled, dtype, cache_enabled` against
    `device_type, dtype, enabled, cache_enabled`), so the fix passes them by keyword, and it
    writes the old defaults a call leaves out (`dtype=torch.float16` on CUDA, `torch.bfloat16`
    on the CPU, `cache_enabled=True`): `torch.amp.autocast` takes those of an enclosing
    autocast region instead."""

    code = "PTT001"
    name = "cuda-amp-autocast"
    severity = "error"
    message = '`{old}` is deprecated: use `torch.amp.autocast("{device}", ...)`'
    message_zh = '`{old}` 已弃用：请改用 `torch.amp.autocast("{device}", ...)`'
    message_args = {"old": "torch.cuda.amp.autocast", "device": "cuda"}
    why_zh = (
        "`torch.cuda.amp.autocast` 和 `torch.cpu.amp.autocast` 是已弃用的别名，调用时会发出"
        " `FutureWarning`；`torch.amp.autocast(device_type, ...)` 是适用于所有设备的统一接口。两者的"
        "位置参数不同（前者是 `enabled, dtype, cache_enabled`，后者是 `device_type, dtype, enabled,"
        " cache_enabled`），所以修复时改用关键字参数传递；调用中省略的参数，修复会写出旧接口的默认值（CUDA 上是"
        " `dtype=torch.float16`，CPU 上是 `torch.bfloat16`，以及 `cache_enabled=True`），因为"
        " `torch.amp.autocast` 省略它们时会沿用外层 autocast 区域的设置。"
    )
    fix_note = (
        "The arguments are passed by keyword, so each keeps its meaning, and the old defaults "
        "that the call leaves out are written, so an enclosing autocast region does not change them."
    )
    fix_note_zh = "参数改用关键字传递，各自的含义保持不变；调用中省略的旧默认值会被写出，外层的 autocast 区域不会改变它们。"
    tip = "autocast-mixed-precision"
    fixable = True
    fix_safety = "safe"
    VALID = (
        'import torch\nwith torch.amp.autocast("cuda", dtype=torch.float16):\n    pass\n',
        "import torch\nwith torch.autocast(device_type='cpu'):\n    pass\n",
    )
    INVALID = (
        Invalid(
            "import torch\nwith torch.cuda.amp.autocast():\n    pass\n",
            'import torch\nwith torch.amp.autocast("cuda", dtype=torch.float16, cache_enabled=True):'
            "\n    pass\n",
        ),
        Invalid(
            "import torch\nwith torch.cuda.amp.autocast(True, torch.bfloat16):\n    pass\n",
            'import torch\nwith torch.amp.autocast("cuda", enabled=True, dtype=torch.bfloat16, '
            "cache_enabled=True):"
            "\n    pass\n",
        ),
        Invalid(
            "import torch\nfrom torch.cpu.amp import autocast\n"
            "with autocast(dtype=torch.bfloat16):\n    pass\n",
            "import torch\nfrom torch.cpu.amp import autocast\n"
            'with torch.amp.autocast("cpu", dtype=torch.bfloat16, cache_enabled=True):\n    pass\n',
        ),
        "from torch.cuda.amp import autocast as ac\n\n@ac()\ndef f(x):\n    return x\n",
        # a simple alias of the torch name
        Invalid(
            "import torch\nautocast = torch.cuda.amp.autocast\nwith autocast(enabled=use_amp):\n    pass\n",
            "import torch\nautocast = torch.cuda.amp.autocast\n"
            'with torch.amp.autocast("cuda", enabled=use_amp, dtype=torch.float16, cache_enabled=True):\n'
            "    pass\n",
        ),
        # bound through a conditional: reported, never rewritten (the fix would turn fp16
        # autocast on when use_fp16 is False)
        "import torch\nfrom contextlib import nullcontext\n"
        "autocast = torch.cuda.amp.autocast if use_fp16 else nullcontext\n"
        "with autocast():\n    y = model(x)\n",
        # bound twice (an import, then another name when AMP is off): reported, not rewritten
        "import torch\nfrom contextlib import nullcontext\nfrom torch.cuda.amp import autocast\n"
        "if not use_amp:\n    autocast = nullcontext\nwith autocast():\n    y = model(x)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for q in ("torch.cuda.amp.autocast", "torch.cpu.amp.autocast"):
            device = _device(q)
            for call in ctx.calls(q):
                edits = []
                if (
                    ctx.torch_is("torch")
                    and not has_star_args(call)
                    and not has_star_kwargs(call)
                    and len(call.args) <= 3
                    and ctx.rewritable(call.func)
                ):
                    edits = self._edits(ctx, call, device)
                yield Report(call, edits, {"old": q, "device": device})

    @staticmethod
    def _edits(ctx: Context, call: ast.Call, device: str) -> list[Edit]:
        """``torch.amp.autocast("<device>", ...)``, each argument by keyword, and the old
        class's defaults where the call leaves them out: ``torch.amp.autocast`` would take
        an enclosing region's dtype and weight cache instead."""
        names = ("enabled", "dtype", "cache_enabled")
        given = {*names[: len(call.args)], *(k.arg for k in call.keywords)}
        missing = ", ".join(f"{k}={v}" for k, v in _DEFAULTS[device].items() if k not in given)
        edits = [replace(call.func, "torch.amp.autocast")]
        if not (call.args or call.keywords):
            return [*edits, insert(open_paren(ctx.lines, call), f'"{device}", {missing}')]
        edits.append(insert(open_paren(ctx.lines, call), f'"{device}", '))
        edits += [
            insert(argument_start(ctx.lines, call, a), f"{n}=")
            for a, n in zip(call.args, names, strict=False)
        ]
        if missing:
            edits.append(insert(after_last_argument(ctx.lines, call)[0], f", {missing}"))
        return edits


class CudaAmpGradScaler(Rule):
    """`torch.cuda.amp.GradScaler` and `torch.cpu.amp.GradScaler` are deprecated (a
    `FutureWarning`); `torch.amp.GradScaler(device, ...)` takes the same arguments after
    the device."""

    code = "PTT002"
    name = "cuda-amp-grad-scaler"
    severity = "error"
    message = '`{old}` is deprecated: use `torch.amp.GradScaler("{device}", ...)`'
    message_zh = '`{old}` 已弃用：请改用 `torch.amp.GradScaler("{device}", ...)`'
    message_args = {"old": "torch.cuda.amp.GradScaler", "device": "cuda"}
    why_zh = (
        "`torch.cuda.amp.GradScaler` 和 `torch.cpu.amp.GradScaler` 已弃用（会发出 `FutureWarning`）；"
        "`torch.amp.GradScaler(device, ...)` 在设备参数之后接受完全相同的参数。"
    )
    tip = "autocast-mixed-precision"
    fixable = True
    fix_safety = "safe"
    VALID = ('import torch\nscaler = torch.amp.GradScaler("cuda", enabled=True)\n',)
    INVALID = (
        Invalid(
            "import torch\nscaler = torch.cuda.amp.GradScaler()\n",
            'import torch\nscaler = torch.amp.GradScaler("cuda")\n',
        ),
        Invalid(
            "import torch\nscaler = torch.cuda.amp.GradScaler(2.0**10, enabled=use_amp)\n",
            'import torch\nscaler = torch.amp.GradScaler("cuda", 2.0**10, enabled=use_amp)\n',
        ),
        "from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n",
        # bound through a conditional: reported, never rewritten
        "import torch\nScaler = torch.cuda.amp.GradScaler if use_fp16 else NoOpScaler\nscaler = Scaler()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for q in ("torch.cuda.amp.GradScaler", "torch.cpu.amp.GradScaler"):
            device = _device(q)
            for call in ctx.calls(q):
                edits = []
                if ctx.torch_is("torch") and ctx.rewritable(call.func):
                    has_args = bool(call.args or call.keywords)
                    edits = [
                        replace(call.func, "torch.amp.GradScaler"),
                        insert(
                            open_paren(ctx.lines, call),
                            f'"{device}", ' if has_args else f'"{device}"',
                        ),
                    ]
                yield Report(call, edits, {"old": q, "device": device})


class CudaAmpCustomFwd(Rule):
    """`torch.cuda.amp.custom_fwd` / `custom_bwd` are deprecated (a `FutureWarning`); they
    forward to `torch.amp.custom_fwd(..., device_type="cuda")`, which is what the fix
    writes."""

    code = "PTT003"
    name = "cuda-amp-custom-fwd"
    severity = "error"
    message = '`torch.cuda.amp.custom_fwd`/`custom_bwd` are deprecated: use `torch.amp.custom_fwd(device_type="cuda")`'
    message_zh = '`torch.cuda.amp.custom_fwd`/`custom_bwd` 已弃用：请改用 `torch.amp.custom_fwd(device_type="cuda")`'
    why_zh = (
        "`torch.cuda.amp.custom_fwd` 和 `custom_bwd` 已弃用（会发出 `FutureWarning`）；它们只是转发给"
        ' `torch.amp.custom_fwd(..., device_type="cuda")`，修复时正是改写成这种形式。'
    )
    tip = "autocast-decorator-forward"
    fixable = True
    fix_safety = "safe"
    VALID = (
        "import torch\n\nclass F(torch.autograd.Function):\n"
        '    @staticmethod\n    @torch.amp.custom_fwd(device_type="cuda")\n'
        "    def forward(ctx, x):\n        return x\n",
    )
    INVALID = (
        Invalid(
            "import torch\n\nclass F(torch.autograd.Function):\n"
            "    @staticmethod\n    @torch.cuda.amp.custom_fwd\n"
            "    def forward(ctx, x):\n        return x\n\n"
            "    @staticmethod\n    @torch.cuda.amp.custom_bwd\n"
            "    def backward(ctx, g):\n        return g\n",
            "import torch\n\nclass F(torch.autograd.Function):\n"
            '    @staticmethod\n    @torch.amp.custom_fwd(device_type="cuda")\n'
            "    def forward(ctx, x):\n        return x\n\n"
            '    @staticmethod\n    @torch.amp.custom_bwd(device_type="cuda")\n'
            "    def backward(ctx, g):\n        return g\n",
        ),
        Invalid(
            "import torch\n\n@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)\n"
            "def forward(ctx, x):\n    return x\n",
            "import torch\n\n@torch.amp.custom_fwd(cast_inputs=torch.float32, "
            'device_type="cuda")\ndef forward(ctx, x):\n    return x\n',
        ),
        # device_type= already given (the deprecated decorator refuses it): not rewritten
        "import torch\n\n@torch.cuda.amp.custom_fwd(device_type='cuda')\n"
        "def forward(ctx, x):\n    return x\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        names = {
            "torch.cuda.amp.custom_fwd": "custom_fwd",
            "torch.cuda.amp.custom_bwd": "custom_bwd",
        }
        for kind in (ast.FunctionDef, ast.AsyncFunctionDef):
            for func in ctx.by_type[kind]:
                assert isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef)
                for deco in func.decorator_list:
                    target = deco.func if isinstance(deco, ast.Call) else deco
                    new = names.get(ctx.qualname(target) or "")
                    if new is None:
                        continue
                    edits = []
                    given = isinstance(deco, ast.Call) and kwarg(deco, "device_type") is not None
                    # device_type= given already: the deprecated decorator refuses it (a
                    # TypeError); a second one would not even compile
                    if ctx.torch_is("torch") and ctx.rewritable(target) and not given:
                        if isinstance(deco, ast.Call):
                            edits = [replace(deco.func, f"torch.amp.{new}")]
                            if kwarg(deco, "device_type") is None:  # never written twice
                                edits.append(add_keyword(ctx.lines, deco, 'device_type="cuda"'))
                        else:
                            edits = [replace(deco, f'torch.amp.{new}(device_type="cuda")')]
                    yield Report(deco, edits)


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
        if not ctx.loops.training_loops:
            return
        last = max(loop.lineno for loop in ctx.loops.training_loops)
        frozen = half.frozen_names(ctx)
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
                half.round_trip(ctx, call)
                or half.frozen(recv, frozen)
                or half.loss_module(ctx, recv)
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
