"""Deprecated and legacy APIs: each still runs, but warns, and is due to be removed."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import (
    Invalid,
    Report,
    Rule,
    add_keyword,
    insert,
    open_paren,
    rename_attribute,
    replace,
    start_of,
)
from generator.lint.syntax import has_star_args

_AMP_DEVICE = {"torch.cuda.amp": "cuda", "torch.cpu.amp": "cpu"}


def _device(qualname: str) -> str:
    return _AMP_DEVICE[qualname.rsplit(".", 1)[0]]


class CudaAmpAutocast(Rule):
    """`torch.cuda.amp.autocast` and `torch.cpu.amp.autocast` are deprecated aliases that
    emit a `FutureWarning`; `torch.amp.autocast(device_type, ...)` is the one API for every
    device. Their positional arguments differ (`enabled, dtype, cache_enabled` against
    `device_type, dtype, enabled, cache_enabled`), so the fix passes them by keyword."""

    code = "PTT001"
    name = "cuda-amp-autocast"
    severity = "error"
    message = '`torch.cuda.amp.autocast` is deprecated: use `torch.amp.autocast("cuda", ...)`'
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
            'import torch\nwith torch.amp.autocast("cuda"):\n    pass\n',
        ),
        Invalid(
            "import torch\nwith torch.cuda.amp.autocast(True, torch.bfloat16):\n    pass\n",
            'import torch\nwith torch.amp.autocast("cuda", enabled=True, dtype=torch.bfloat16):'
            "\n    pass\n",
        ),
        Invalid(
            "import torch\nfrom torch.cpu.amp import autocast\n"
            "with autocast(dtype=torch.bfloat16):\n    pass\n",
            "import torch\nfrom torch.cpu.amp import autocast\n"
            'with torch.amp.autocast("cpu", dtype=torch.bfloat16):\n    pass\n',
        ),
        "from torch.cuda.amp import autocast as ac\n\n@ac()\ndef f(x):\n    return x\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for q in ("torch.cuda.amp.autocast", "torch.cpu.amp.autocast"):
            device = _device(q)
            for call in ctx.calls(q):
                message = f'`{q}` is deprecated: use `torch.amp.autocast("{device}", ...)`'
                edits = []
                if ctx.torch_is("torch") and not has_star_args(call) and len(call.args) <= 3:
                    edits = [replace(call.func, "torch.amp.autocast")]
                    edits.append(
                        insert(
                            open_paren(ctx.lines, call),
                            f'"{device}", ' if call.args or call.keywords else f'"{device}"',
                        )
                    )
                    for arg, name in zip(
                        call.args, ("enabled", "dtype", "cache_enabled"), strict=False
                    ):
                        edits.append(insert(start_of(arg), f"{name}="))
                yield Report(call, edits, message)


class CudaAmpGradScaler(Rule):
    """`torch.cuda.amp.GradScaler` and `torch.cpu.amp.GradScaler` are deprecated (a
    `FutureWarning`); `torch.amp.GradScaler(device, ...)` takes the same arguments after
    the device."""

    code = "PTT002"
    name = "cuda-amp-grad-scaler"
    severity = "error"
    message = '`torch.cuda.amp.GradScaler` is deprecated: use `torch.amp.GradScaler("cuda", ...)`'
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
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for q in ("torch.cuda.amp.GradScaler", "torch.cpu.amp.GradScaler"):
            device = _device(q)
            for call in ctx.calls(q):
                edits = []
                if ctx.torch_is("torch"):
                    has_args = bool(call.args or call.keywords)
                    edits = [
                        replace(call.func, "torch.amp.GradScaler"),
                        insert(
                            open_paren(ctx.lines, call),
                            f'"{device}", ' if has_args else f'"{device}"',
                        ),
                    ]
                message = f'`{q}` is deprecated: use `torch.amp.GradScaler("{device}", ...)`'
                yield Report(call, edits, message)


class CudaAmpCustomFwd(Rule):
    """`torch.cuda.amp.custom_fwd` / `custom_bwd` are deprecated (a `FutureWarning`); they
    forward to `torch.amp.custom_fwd(..., device_type="cuda")`, which is what the fix
    writes."""

    code = "PTT003"
    name = "cuda-amp-custom-fwd"
    severity = "error"
    message = '`torch.cuda.amp.custom_fwd`/`custom_bwd` are deprecated: use `torch.amp.custom_fwd(device_type="cuda")`'
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
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        names = {
            "torch.cuda.amp.custom_fwd": "custom_fwd",
            "torch.cuda.amp.custom_bwd": "custom_bwd",
        }
        for kind in (ast.FunctionDef, ast.AsyncFunctionDef):
            for func in ctx.by_type[kind]:
                for deco in func.decorator_list:  # type: ignore[attr-defined]
                    target = deco.func if isinstance(deco, ast.Call) else deco
                    new = names.get(ctx.qualname(target) or "")
                    if new is None:
                        continue
                    edits = []
                    if ctx.torch_is("torch"):
                        if isinstance(deco, ast.Call):
                            edits = [
                                replace(deco.func, f"torch.amp.{new}"),
                                add_keyword(ctx.lines, deco, 'device_type="cuda"'),
                            ]
                        else:
                            edits = [replace(deco, f'torch.amp.{new}(device_type="cuda")')]
                    yield Report(deco, edits)


class ResetMaxMemory(Rule):
    """`torch.cuda.reset_max_memory_allocated` and `reset_max_memory_cached` warn that they
    now call `torch.cuda.reset_peak_memory_stats`, which resets every peak counter: call
    that directly."""

    code = "PTT004"
    name = "reset-max-memory"
    severity = "error"
    message = (
        "`reset_max_memory_allocated` is deprecated: use `torch.cuda.reset_peak_memory_stats()`"
    )
    tip = "measure-gpu-memory"
    fixable = True
    fix_safety = "safe"
    VALID = ("import torch\ntorch.cuda.reset_peak_memory_stats()\n",)
    INVALID = (
        Invalid(
            "import torch\ntorch.cuda.reset_max_memory_allocated()\n",
            "import torch\ntorch.cuda.reset_peak_memory_stats()\n",
        ),
        Invalid(
            "import torch\ntorch.cuda.reset_max_memory_cached(device)\n",
            "import torch\ntorch.cuda.reset_peak_memory_stats(device)\n",
        ),
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for old in ("reset_max_memory_allocated", "reset_max_memory_cached"):
            for call in ctx.calls(f"torch.cuda.{old}", f"torch.cuda.memory.{old}"):
                edits = []
                if isinstance(call.func, ast.Attribute):
                    edits = [rename_attribute(call.func, "reset_peak_memory_stats")]
                yield Report(
                    call,
                    edits,
                    f"`{old}` is deprecated: use `torch.cuda.reset_peak_memory_stats()`",
                )


class MemoryCached(Rule):
    """`torch.cuda.memory_cached` and `max_memory_cached` were renamed to
    `memory_reserved` and `max_memory_reserved`; the old names warn."""

    code = "PTT005"
    name = "memory-cached"
    severity = "error"
    message = "`torch.cuda.memory_cached` was renamed: use `torch.cuda.memory_reserved()`"
    tip = "measure-gpu-memory"
    fixable = True
    fix_safety = "safe"
    VALID = ("import torch\nused = torch.cuda.max_memory_reserved()\n",)
    INVALID = (
        Invalid(
            "import torch\nused = torch.cuda.memory_cached()\npeak = torch.cuda.max_memory_cached()\n",
            "import torch\nused = torch.cuda.memory_reserved()\npeak = torch.cuda.max_memory_reserved()\n",
        ),
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for old, new in (
            ("memory_cached", "memory_reserved"),
            ("max_memory_cached", "max_memory_reserved"),
        ):
            for call in ctx.calls(f"torch.cuda.{old}", f"torch.cuda.memory.{old}"):
                edits = (
                    [rename_attribute(call.func, new)]
                    if isinstance(call.func, ast.Attribute)
                    else []
                )
                yield Report(
                    call, edits, f"`torch.cuda.{old}` was renamed: use `torch.cuda.{new}()`"
                )


class AutogradVariable(Rule):
    """`torch.autograd.Variable` has been a no-op wrapper since PyTorch 0.4: tensors carry
    `requires_grad` themselves, and `volatile=True` no longer does anything (use
    `torch.no_grad()`)."""

    code = "PTT006"
    name = "autograd-variable"
    severity = "info"
    message = "`Variable` is a no-op since PyTorch 0.4: use the tensor itself (with `requires_grad=True` where needed)"
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


class TensorData(Rule):
    """Writing through `.data` changes a tensor behind autograd's back: no version-counter
    check, so a value that backward still needs can be overwritten silently. Update
    parameters under `torch.no_grad()`, initialise them with `nn.init` (which already runs
    without grad), and use `.detach()` to read a value without its graph."""

    code = "PTT007"
    name = "tensor-data"
    severity = "info"
    message = "`.data` bypasses autograd's checks: use `.detach()`, or `torch.no_grad()` for in-place updates"
    tip = "variable-is-gone"
    VALID = (
        "import torch\nwith torch.no_grad():\n    w -= lr * w.grad\nlast = loss.detach()\n",
        "import torch\nx = dataset.data\nn = len(batch.data)\n",
        "class Rows:\n    def __init__(self, rows):\n        self.data = rows\n        self.data += [0]\n",
    )
    INVALID = (
        "import torch\nw.data -= lr * w.grad\n",
        "import torch\nw.grad.data.zero_()\n",
        "import torch\nfrom torch import nn\nnn.init.kaiming_normal_(m.weight.data)\n",
        "import torch\nfor x, y in data:\n    loss = f(x, y)\n    loss.backward()\n    last = loss.data\n",
        "import torch\nm.weight.data.normal_(0.0, 0.02)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        loss_names = set()
        for loop in ctx.training_loops:
            loss_names |= ctx.loss_names(loop)
        for node in ctx.by_type[ast.Attribute]:
            assert isinstance(node, ast.Attribute)
            if node.attr != "data" or not isinstance(node.ctx, ast.Load | ast.Store):
                continue
            parent = ctx.parent(node)
            value = node.value
            if isinstance(value, ast.Name) and value.id in {"self", "cls"}:
                continue  # a Dataset's own `self.data` attribute, not Tensor.data
            hit = (
                (
                    # x.grad.data
                    isinstance(value, ast.Attribute) and value.attr == "grad"
                )
                or (
                    # w.data -= ... / w.data = ...
                    isinstance(node.ctx, ast.Store)
                    and isinstance(parent, ast.AugAssign | ast.Assign)
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
                or (isinstance(value, ast.Name) and value.id in loss_names)
            )
            if hit:
                yield Report(node)


class DeprecatedAlias(Rule):
    """`torch.nn.utils.clip_grad_norm` (no trailing underscore) is a deprecated alias of
    `clip_grad_norm_`, which clips in place and returns the total norm: same call, new
    name."""

    code = "PTT008"
    name = "clip-grad-norm-alias"
    severity = "error"
    message = "`clip_grad_norm` is deprecated: use `torch.nn.utils.clip_grad_norm_`"
    tip = "gradient-clipping"
    fixable = True
    fix_safety = "safe"
    VALID = ("import torch\ntorch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n",)
    INVALID = (
        Invalid(
            "import torch\nfrom torch import nn\nnn.utils.clip_grad_norm(model.parameters(), 1.0)\n",
            "import torch\nfrom torch import nn\nnn.utils.clip_grad_norm_(model.parameters(), 1.0)\n",
        ),
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for call in ctx.calls(
            "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm"
        ):
            edits = (
                [rename_attribute(call.func, "clip_grad_norm_")]
                if isinstance(call.func, ast.Attribute)
                else []
            )
            yield Report(call, edits)


_INIT_ALIASES = (
    "uniform",
    "normal",
    "constant",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
)


class InitWithoutUnderscore(Rule):
    """The `torch.nn.init` functions without the trailing underscore (`xavier_normal`,
    `kaiming_uniform`, ...) are deprecated aliases that warn; the `_` versions fill the
    tensor in place under `no_grad`, exactly as the aliases do."""

    code = "PTT009"
    name = "init-without-underscore"
    severity = "error"
    message = "deprecated `nn.init` alias: use the in-place version ending in `_`"
    tip = "weight-init-apply"
    fixable = True
    fix_safety = "safe"
    VALID = ("from torch import nn\nnn.init.xavier_normal_(layer.weight)\n",)
    INVALID = (
        Invalid(
            "from torch import nn\nnn.init.xavier_normal(layer.weight)\nnn.init.constant(layer.bias, 0)\n",
            "from torch import nn\nnn.init.xavier_normal_(layer.weight)\nnn.init.constant_(layer.bias, 0)\n",
        ),
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for old in _INIT_ALIASES:
            for call in ctx.calls(f"torch.nn.init.{old}"):
                edits = (
                    [rename_attribute(call.func, old + "_")]
                    if isinstance(call.func, ast.Attribute)
                    else []
                )
                yield Report(call, edits, f"`nn.init.{old}` is deprecated: use `nn.init.{old}_`")


class JitScript(Rule):
    """TorchScript is deprecated: in PyTorch 2.13 `torch.jit.script` and `torch.jit.trace`
    emit a `DeprecationWarning` that points to `torch.compile` (to speed code up) or
    `torch.export` (to deploy it)."""

    code = "PTT010"
    name = "jit-script"
    severity = "error"
    message = (
        "TorchScript is deprecated: use `torch.compile` to fuse code, `torch.export` to deploy it"
    )
    tip = "torch-compile-fusion"
    VALID = ("import torch\nfused = torch.compile(gelu)\n",)
    INVALID = (
        "import torch\n\n@torch.jit.script\ndef gelu(x):\n    return x * torch.sigmoid(1.702 * x)\n",
        "import torch\ntraced = torch.jit.trace(model, example)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        names = {"torch.jit.script", "torch.jit.trace"}
        yield from (Report(c) for c in ctx.calls(*names))
        for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            for node in ctx.by_type[kind]:
                for deco in node.decorator_list:  # type: ignore[attr-defined]
                    if not isinstance(deco, ast.Call) and ctx.qualname(deco) in names:
                        yield Report(deco)
