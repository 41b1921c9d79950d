"""Deprecated APIs outside mixed precision: each still runs, but warns, and is due to be removed."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import (
    Invalid,
    Report,
    Rule,
    rename_attribute,
)


class ResetMaxMemory(Rule):
    """`torch.cuda.reset_max_memory_allocated` and `reset_max_memory_cached` warn that they
    now call `torch.cuda.reset_peak_memory_stats`, which resets every peak counter: call
    that directly."""

    code = "PTT004"
    name = "reset-max-memory"
    severity = "error"
    message = "`{old}` is deprecated: use `torch.cuda.reset_peak_memory_stats()`"
    message_zh = "`{old}` 已弃用：请改用 `torch.cuda.reset_peak_memory_stats()`"
    message_args = {"old": "reset_max_memory_allocated"}
    why_zh = (
        "`torch.cuda.reset_max_memory_allocated` 和 `reset_max_memory_cached` 调用时会警告：它们如今"
        "实际调用的就是 `torch.cuda.reset_peak_memory_stats`，会重置所有峰值计数器，不如直接调用它。"
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
                if isinstance(call.func, ast.Attribute) and ctx.rewritable(call.func):
                    edits = [rename_attribute(call.func, "reset_peak_memory_stats", ctx.lines)]
                yield Report(call, edits, {"old": old})


class MemoryCached(Rule):
    """`torch.cuda.memory_cached` and `max_memory_cached` were renamed to
    `memory_reserved` and `max_memory_reserved`; the old names warn."""

    code = "PTT005"
    name = "memory-cached"
    severity = "error"
    message = "`torch.cuda.{old}` was renamed: use `torch.cuda.{new}()`"
    message_zh = "`torch.cuda.{old}` 已改名：请改用 `torch.cuda.{new}()`"
    message_args = {"old": "memory_cached", "new": "memory_reserved"}
    why_zh = (
        "`torch.cuda.memory_cached` 和 `max_memory_cached` 已分别改名为 `memory_reserved` 和"
        " `max_memory_reserved`，旧名称调用时会发出警告。"
    )
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
                    [rename_attribute(call.func, new, ctx.lines)]
                    if isinstance(call.func, ast.Attribute) and ctx.rewritable(call.func)
                    else []
                )
                yield Report(call, edits, {"old": old, "new": new})


class DeprecatedAlias(Rule):
    """`torch.nn.utils.clip_grad_norm` (no trailing underscore) is a deprecated alias of
    `clip_grad_norm_`, which clips in place and returns the total norm: same call, new
    name."""

    code = "PTT008"
    name = "clip-grad-norm-alias"
    severity = "error"
    message = "`clip_grad_norm` is deprecated: use `torch.nn.utils.clip_grad_norm_`"
    message_zh = "`clip_grad_norm` 已弃用：请改用 `torch.nn.utils.clip_grad_norm_`"
    why_zh = (
        "`torch.nn.utils.clip_grad_norm`（结尾没有下划线）是 `clip_grad_norm_` 已弃用的别名；后者原地"
        "裁剪梯度并返回总范数：调用方式相同，只是换个名字。"
    )
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
                [rename_attribute(call.func, "clip_grad_norm_", ctx.lines)]
                if isinstance(call.func, ast.Attribute) and ctx.rewritable(call.func)
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
    message = "`nn.init.{old}` is deprecated: use `nn.init.{old}_`"
    message_zh = "`nn.init.{old}` 已弃用：请改用 `nn.init.{old}_`"
    message_args = {"old": "xavier_normal"}
    why_zh = (
        "`torch.nn.init` 中不带结尾下划线的函数（`xavier_normal`、`kaiming_uniform` 等）是已弃用的别名，"
        "调用时会警告；带 `_` 的版本在 `no_grad` 下原地填充张量，效果与这些别名完全相同。"
    )
    tip = "weight-init-apply"
    fixable = True
    fix_safety = "safe"
    VALID = ("from torch import nn\nnn.init.xavier_normal_(layer.weight)\n",)
    INVALID = (
        Invalid(
            "from torch import nn\nnn.init.xavier_normal(layer.weight)\nnn.init.constant(layer.bias, 0)\n",
            "from torch import nn\nnn.init.xavier_normal_(layer.weight)\nnn.init.constant_(layer.bias, 0)\n",
        ),
        # `init` may be another module, without xavier_normal_: reported, not rewritten
        "import torch\ninit = torch.nn.init if use_torch_init else my_init\n"
        "init.xavier_normal(layer.weight)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for old in _INIT_ALIASES:
            for call in ctx.calls(f"torch.nn.init.{old}"):
                edits = (
                    [rename_attribute(call.func, old + "_", ctx.lines)]
                    if isinstance(call.func, ast.Attribute) and ctx.rewritable(call.func)
                    else []
                )
                yield Report(call, edits, {"old": old})


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
    message_zh = "TorchScript 已弃用：加速代码用 `torch.compile`，部署用 `torch.export`"
    why_zh = (
        "TorchScript 已被弃用：在 PyTorch 2.13 中，`torch.jit.script` 和 `torch.jit.trace` 会发出"
        " `DeprecationWarning`，并指向 `torch.compile`（用来加速代码）或 `torch.export`（用来部署）。"
    )
    tip = "torch-compile-fusion"
    VALID = ("import torch\nfused = torch.compile(gelu)\n",)
    INVALID = (
        Invalid(
            "import torch\n\n@torch.jit.script\ndef gelu(x):\n    return x * torch.sigmoid(1.702 * x)\n",
            instead="import torch\n\n@torch.compile\ndef gelu(x):\n    return x * torch.sigmoid(1.702 * x)\n",
        ),
        "import torch\ntraced = torch.jit.trace(model, example)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        names = {"torch.jit.script", "torch.jit.trace"}
        yield from (Report(c) for c in ctx.calls(*names))
        for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            for node in ctx.by_type[kind]:
                assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                for deco in node.decorator_list:
                    if not isinstance(deco, ast.Call) and ctx.qualname(deco) in names:
                        yield Report(deco)


class SchedulerGetLr(Rule):
    """`scheduler.get_lr()` is the scheduler's own step formula, meant to be called inside
    `step()`: called from outside it warns ("use `get_last_lr()`") and, for chainable
    schedules such as `StepLR` at a decay boundary, returns the *next* decay applied once
    more, not the learning rate in use. `scheduler.get_last_lr()` returns the rates `step()`
    last set. A `get_lr` defined by a scheduler class of this file, called by its own
    methods, is left alone."""

    code = "PTT059"
    name = "scheduler-get-lr"
    severity = "warning"
    message = "`scheduler.get_lr()` outside `step()` warns and can return a wrong value: use `get_last_lr()`"
    message_zh = "在 `step()` 之外调用 `scheduler.get_lr()` 会发出警告，还可能返回错误的值：请改用 `get_last_lr()`"
    why_zh = (
        "`scheduler.get_lr()` 是调度器自己在 `step()` 内部使用的计算公式：在 `step()` 之外调用会发出警告"
        "（提示改用 `get_last_lr()`），而且对于 `StepLR` 这类可链式组合的调度，在衰减的边界上它返回的是"
        "再衰减一次的值，而不是当前正在使用的学习率。`scheduler.get_last_lr()` 返回的才是 `step()` 最后设置的"
        "学习率。本文件中自定义调度器类定义的 `get_lr`、由这个类自己的方法调用时，不会报告。"
    )
    tip = "lr-scheduler-order"
    fixable = True
    fix_safety = "unsafe"
    fix_note = (
        "It calls `get_last_lr()` instead: the value read is the rate in use, which differs "
        "from what `get_lr()` returned at a decay boundary."
    )
    fix_note_zh = "修复会改为调用 `get_last_lr()`：读到的是正在使用的学习率，在衰减边界上与 `get_lr()` 原来返回的值不同。"
    VALID = (
        "import torch\nscheduler = torch.optim.lr_scheduler.StepLR(optimizer, 30)\n"
        "print(scheduler.get_last_lr()[0])\n",
        # a custom schedule defines get_lr for step() to call
        "import torch\n\nclass Warmup(torch.optim.lr_scheduler.LRScheduler):\n"
        "    def get_lr(self):\n        return [base * min(1.0, self.last_epoch / 100) for base in self.base_lrs]\n\n"
        "    def current(self):\n        return self.get_lr()\n",
    )
    INVALID = (
        Invalid(
            "import torch\nscheduler = torch.optim.lr_scheduler.StepLR(optimizer, 30)\n"
            "for epoch in range(90):\n    train(epoch)\n    scheduler.step()\n"
            "    print('lr', scheduler.get_lr()[0])\n",
            "import torch\nscheduler = torch.optim.lr_scheduler.StepLR(optimizer, 30)\n"
            "for epoch in range(90):\n    train(epoch)\n    scheduler.step()\n"
            "    print('lr', scheduler.get_last_lr()[0])\n",
        ),
        Invalid(
            "lr = float(lr_scheduler.get_lr()[-1])\n",
            "lr = float(lr_scheduler.get_last_lr()[-1])\n",
        ),
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for call in ctx.methods("get_lr"):
            if call.args or call.keywords or not isinstance(call.func, ast.Attribute):
                continue
            recv = call.func.value
            if isinstance(recv, ast.Name) and recv.id == "self":
                continue  # a scheduler class of this file calling its own formula
            if not ctx.loops.is_scheduler_name(recv):
                continue
            yield Report(call, [rename_attribute(call.func, "get_last_lr")])
