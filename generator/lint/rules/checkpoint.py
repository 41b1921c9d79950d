"""Checkpoints: what `torch.save` writes, how `torch.load` reads it, and who writes it."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule, add_keyword
from generator.lint.rules.saved import (
    MODULE_CHAIN,
    SAVE,
    UNWRAP,
    expand,
    parts,
    rejected,
    saved_values,
)
from generator.lint.syntax import (
    has_star_kwargs,
    is_const,
    kwarg,
    last_name,
    method_name,
    receiver,
)

_LOAD = ("torch.load", "torch.serialization.load")
_WRAPPERS = {
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.compile",
    "torch.distributed.fsdp.FullyShardedDataParallel",
}


_SAFE_GLOBALS = {"torch.serialization.safe_globals", "torch.serialization.add_safe_globals"}


class TorchLoadWeightsOnly(Rule):
    """`torch.load` unpickles: with `weights_only=False` a checkpoint file can run arbitrary
    code when it is loaded. Since PyTorch 2.6 `weights_only=True` is the default, which
    loads tensors, state dicts and plain containers only; say so explicitly, so the code
    is safe on every version and its intent is visible. A load inside
    `torch.serialization.safe_globals(...)` (or in a file that calls `add_safe_globals`)
    already loads the `weights_only` way and is not reported."""

    code = "PTT011"
    name = "torch-load-weights-only"
    severity = "error"
    message = "`torch.load` without `weights_only=True`: pass it, and save state dicts"
    message_zh = "`torch.load` 没有传 `weights_only=True`：请显式传入，并只保存 state dict"
    why_zh = (
        "`torch.load` 会反序列化 pickle：如果 `weights_only=False`，加载检查点文件时就可能执行其中的"
        "任意代码。从 PyTorch 2.6 起 `weights_only=True` 已是默认值，只加载张量、state dict 和普通容器；"
        "把它显式写出来，代码在每个版本上都安全，意图也一目了然。在"
        " `torch.serialization.safe_globals(...)` 里加载（或文件调用了 `add_safe_globals`）说明已经按"
        " `weights_only` 的方式加载，不再报告。"
    )
    tip = "save-load-state-dict"
    fixable = True
    fix_safety = "unsafe"
    fix_note = (
        "It adds `weights_only=True`. On torch 2.6 and later that is already the default, so "
        "nothing changes; on torch 2.5 and earlier it makes `torch.load` refuse checkpoints that "
        "hold arbitrary Python objects, which loaded before."
    )
    fix_note_zh = (
        "修复会加上 `weights_only=True`。在 torch 2.6 及以后的版本中这本来就是默认值，行为不变；"
        "在 torch 2.5 及更早的版本中，`torch.load` 会因此拒绝含有任意 Python 对象的检查点，而这些"
        "检查点原本可以加载。"
    )
    VALID = (
        'import torch\nstate = torch.load("ckpt.pt", map_location="cpu", weights_only=True)\n',
        "import torch\nstate = torch.load(path, **load_kwargs)\n",
        # the code already relies on weights_only loading (the default since torch 2.6)
        "import torch\nwith torch.serialization.safe_globals([Config]):\n"
        "    state = torch.load(path)\n",
    )
    # (a call with `pickle_module=` is reported without a fix: weights_only refuses it)
    INVALID = (
        Invalid(
            'import torch\nstate = torch.load("ckpt.pt")\n',
            'import torch\nstate = torch.load("ckpt.pt", weights_only=True)\n',
        ),
        Invalid(
            "import torch\nstate = torch.load(\n    path,\n    map_location=device,\n)\n",
            "import torch\nstate = torch.load(\n    path,\n    map_location=device, weights_only=True,\n)\n",
        ),
        # weights_only=True refuses a custom pickle_module: reported, not fixed
        "import dill\nimport torch\nstate = torch.load(path, pickle_module=dill)\n",
        # `load` is pickle.load on the other side, which takes no weights_only: not fixed
        "import pickle\nimport torch\nload = torch.load if use_torch else pickle.load\n"
        "with open(path, 'rb') as f:\n    state = load(f)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        if ctx.calls("torch.serialization.add_safe_globals"):
            return
        for call in ctx.calls(*_LOAD):
            if any(
                isinstance(a, ast.With)
                and any(
                    isinstance(i.context_expr, ast.Call)
                    and ctx.qualname(i.context_expr.func) in _SAFE_GLOBALS
                    for i in a.items
                )
                for a in ctx.ancestors(call)
            ):
                continue
            if (
                kwarg(call, "weights_only") is None
                and not has_star_kwargs(call)
                and len(call.args) < 5
            ):
                # weights_only=True refuses an explicit pickle_module: report, but do not fix
                custom_pickle = kwarg(call, "pickle_module") is not None or len(call.args) >= 3
                fixable = not custom_pickle and ctx.rewritable(call.func)
                edits = [add_keyword(ctx.lines, call, "weights_only=True")] if fixable else []
                yield Report(call, edits)


class SaveWholeModel(Rule):
    """`torch.save(model)` pickles the module object, so loading needs the same class at
    the same import path, and `weights_only=False`, which can run code from the file.
    Save `model.state_dict()` (and the optimizer's) instead, and rebuild the model from
    code when loading."""

    code = "PTT012"
    name = "save-whole-model"
    severity = "error"
    message = "`torch.save` of a whole module: save `model.state_dict()` instead"
    message_zh = "`torch.save` 保存了整个模块：请改为保存 `model.state_dict()`"
    why_zh = (
        "`torch.save(model)` 会 pickle 整个模块对象，加载时要求同一个类位于同一个导入路径，还必须用"
        " `weights_only=False`，而这可能执行文件里的代码。请保存 `model.state_dict()`（以及优化器的），"
        '加载时先用代码重建模型。检查点字典里的模块（`{"model": deepcopy(model).half()}`）、先赋给'
        "变量再保存的字典，以及经由本文件中的保存函数写出的对象，也都会检查。"
    )
    tip = "save-load-state-dict"
    VALID = (
        'import torch\ntorch.save(model.state_dict(), "model.pt")\n',
        'import torch\ntorch.save({"model": model.state_dict(), "step": step}, path)\n',
        "import copy\nimport torch\nbest_model = copy.deepcopy(model.state_dict())\n"
        "torch.save(best_model, 'best.pt')\n",
        "import torch\n\ndef save_checkpoint(state, path):\n    torch.save(state, path)\n\n"
        "save_checkpoint({'model': model.state_dict(), 'epoch': 3}, 'ckpt.pt')\n",
    )
    INVALID = (
        'import torch\ntorch.save(model, "model.pt")\n',
        "import torch\nfrom torch import nn\nlayer = nn.Linear(4, 4)\ntorch.save(layer, buffer)\n",
        'import torch\ntorch.save(self.model, "model.pt")\n',
        # a module inside the checkpoint dict, built in a variable first
        "import torch\nfrom copy import deepcopy\n"
        "ckpt = {'epoch': epoch, 'model': deepcopy(model).half(), 'optimizer': opt.state_dict()}\n"
        "torch.save(ckpt, last)\n",
        "import torch\nfrom copy import deepcopy\n"
        "torch.save({'model': deepcopy(de_parallel(model)).half(), 'epoch': epoch}, best)\n",
        # through a helper of the same file
        "import torch\n\ndef save(obj, path):\n    torch.save(obj, path)\n\n"
        "save({'net': net, 'epoch': 3}, 'ckpt.pt')\n",
        # a copy of the unwrapped-or-not model, cast to half, inside the checkpoint
        "import torch\nfrom copy import deepcopy\n"
        "ckpt = {'epoch': epoch, 'model': deepcopy(model.module if parallel else model).half()}\n"
        "torch.save(ckpt, last)\n",
        # a list holding the policy module, as RL scripts save it
        "import torch\nactor_critic = Policy(obs_shape, action_space)\n"
        "optimizer = torch.optim.Adam(actor_critic.parameters(), lr=7e-4)\n"
        "torch.save([actor_critic, obs_rms], 'policy.pt')\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for where, obj in saved_values(ctx):
            if any(self._holds_module(ctx, v) for v in expand(ctx, obj)):
                yield Report(where)

    @classmethod
    def _holds_module(cls, ctx: Context, value: ast.AST) -> bool:
        """A module, or a dict, list or tuple literal with a module among its values."""
        return any(cls._is_module(ctx, v) for v in parts(ctx, value, depth=1))

    @staticmethod
    def _is_module(ctx: Context, node: ast.AST | None) -> bool:
        """``model``, ``self.model``, ``deepcopy(model).half()`` (not ``model.state_dict()``)."""
        while isinstance(node, ast.Call | ast.IfExp):
            if isinstance(node, ast.IfExp):  # model.module if parallel else model
                return SaveWholeModel._is_module(ctx, node.body) or SaveWholeModel._is_module(
                    ctx, node.orelse
                )
            if method_name(node) in MODULE_CHAIN:
                node = receiver(node)
            elif last_name(node.func) in UNWRAP and len(node.args) == 1:
                node = node.args[0]
            else:
                return False
        if not isinstance(node, ast.Name | ast.Attribute) or not ctx.name_is_module(node):
            return False
        return not (
            isinstance(node, ast.Name)
            and any(
                isinstance(n, ast.Call) and method_name(n) == "state_dict"
                for value in ctx.assignments.get(node.id, ())
                for n in ast.walk(value)
            )
        )  # best_model = copy.deepcopy(model.state_dict())


class SaveWrapperStateDict(Rule):
    """The `state_dict()` of a `DistributedDataParallel`, `DataParallel` or
    `torch.compile` wrapper prefixes every key (`module.`, `_orig_mod.`), so it does not
    load into the plain model. Save the unwrapped model's state dict
    (`ddp_model.module`, `compiled._orig_mod`)."""

    code = "PTT013"
    name = "save-wrapper-state-dict"
    severity = "info"
    message = "state dict of a DDP/compile wrapper: its keys carry a `module.`/`_orig_mod.` prefix; save the unwrapped model's"
    message_zh = "保存的是 DDP/compile 包装器的 `state_dict()`：键带有 `module.`/`_orig_mod.` 前缀；请改为保存未包装模型的 `state_dict()`"
    why_zh = (
        "`DistributedDataParallel`、`DataParallel` 或 `torch.compile` 包装器的 `state_dict()` 会给每个"
        "键加上前缀（`module.`、`_orig_mod.`），因此不能直接加载到普通模型中。请保存未包装模型的 state"
        " dict（`ddp_model.module`、`compiled._orig_mod`）。先放进变量再保存的检查点字典，以及经由本文件"
        "中的保存函数写出的字典，也都会检查。"
    )
    tip = "save-unwrapped-model"
    VALID = (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        'ddp_model = DDP(model)\ntorch.save(ddp_model.module.state_dict(), "m.pt")\n',
    )
    INVALID = (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        'ddp_model = DDP(model)\ntorch.save(ddp_model.state_dict(), "m.pt")\n',
        'import torch\ncompiled = torch.compile(model)\ntorch.save({"model": compiled.state_dict()}, p)\n',
        # through one variable and a helper, as pytorch-cifar and ImageNet scripts write it
        "import torch\nfrom torch import nn\nnet = nn.DataParallel(net)\n"
        "state = {'net': net.state_dict(), 'acc': acc}\ntorch.save(state, './ckpt.pth')\n",
        "import torch\n\ndef save_checkpoint(state, filename):\n    torch.save(state, filename)\n\n"
        "model = torch.nn.parallel.DistributedDataParallel(model)\n"
        "save_checkpoint({'state_dict': model.state_dict(), 'epoch': epoch}, 'ckpt.pth')\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        seen: set[ast.AST] = set()
        for _, obj in saved_values(ctx):
            for value in expand(ctx, obj):
                for node in ast.walk(value):
                    if (
                        node not in seen
                        and isinstance(node, ast.Call)
                        and method_name(node) == "state_dict"
                        and isinstance(recv := receiver(node), ast.Name)
                        and ctx.assigned_from(recv.id, _WRAPPERS)
                    ):
                        seen.add(node)
                        yield Report(node)


class SaveOnEveryRank(Rule):
    """In a multi-process job every rank runs the same code: an unguarded `torch.save`
    makes all of them write the same file at once (wasted I/O, and torn files on shared
    storage). Save on rank 0 only, then `barrier()` before anyone reads the file."""

    code = "PTT019"
    name = "save-on-every-rank"
    severity = "info"
    message = "`torch.save` runs on every rank: save on rank 0 only"
    message_zh = "`torch.save` 在每个 rank 上都会执行：只在 rank 0 上保存"
    why_zh = (
        "多进程任务中，每个 rank 都运行同一份代码：没有条件保护的 `torch.save` 会让所有进程同时写同一个"
        "文件（浪费 I/O，在共享存储上还可能写出损坏的文件）。只在 rank 0 上保存，然后在任何进程读取这个"
        "文件之前调用 `barrier()`。"
    )
    tip = "rank-zero-logging-saving"
    VALID = (
        "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')\n"
        "if dist.get_rank() == 0:\n    torch.save(model.state_dict(), 'm.pt')\n",
        "import torch\nimport torch.distributed as dist\n"
        "dist.init_process_group('gloo', store=store, rank=0, world_size=1)\n"
        "torch.save(model.state_dict(), 'm.pt')\n",
    )
    INVALID = (
        Invalid(
            "import torch\nimport torch.distributed as dist\n\ndef main():\n"
            "    dist.init_process_group('nccl')\n    train()\n"
            "    torch.save(model.state_dict(), 'm.pt')\n\n"
            "if __name__ == '__main__':\n    main()\n",
            instead="import torch\nimport torch.distributed as dist\n\ndef main():\n"
            "    dist.init_process_group('nccl')\n    train()\n    if dist.get_rank() == 0:\n"
            "        torch.save(model.state_dict(), 'm.pt')\n    dist.barrier()\n\n"
            "if __name__ == '__main__':\n    main()\n",
        ),
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        groups = ctx.calls("torch.distributed.init_process_group")
        if not groups or all(
            is_const(getattr(kwarg(g, "world_size"), "value", None), 1) for g in groups
        ):
            return
        for call in ctx.calls(*SAVE):
            if ctx.runs_unconditionally(call):
                yield Report(call)


class SaveRejectedByWeightsOnly(Rule):
    """Since PyTorch 2.6 `torch.load` defaults to `weights_only=True`, which rebuilds tensors,
    numbers, strings and plain containers only. A checkpoint that pickles anything else
    fails to load, with or without `weights_only=True`: an argparse `Namespace` (save
    `vars(args)`), an optimizer, LR scheduler or `GradScaler` object (save its
    `state_dict()`), a NumPy value (save `float(x)`, `x.tolist()` or `torch.from_numpy(x)`), a
    `pathlib.Path` (save `str(path)`). Whole modules are PTT012's. Reported at the
    `torch.save` (or the call of a saving helper of this file), for the first such object in
    the saved value, a dict or list literal, or the variable it was built in."""

    code = "PTT056"
    name = "save-rejected-by-weights-only"
    severity = "error"
    message = "`torch.save` of `{name}`, which `weights_only` loading rejects: save plain data (numbers, strings, state dicts)"
    message_zh = "`torch.save` 保存了 `{name}`，`weights_only` 加载时会拒绝它：请改为保存普通数据（数值、字符串、state dict）"
    message_args = {"name": "args"}
    variants = {
        "namespace": (
            "`torch.save` of the argparse Namespace `{name}`, which `weights_only` loading rejects: save `vars({name})`",
            "`torch.save` 保存了 argparse 的 Namespace `{name}`，`weights_only` 加载时会拒绝它：请改为保存 `vars({name})`",
        ),
        "optimizer": (
            "`torch.save` of the optimizer object `{name}`, which `weights_only` loading rejects: save `{name}.state_dict()`",
            "`torch.save` 保存了优化器对象 `{name}`，`weights_only` 加载时会拒绝它：请改为保存 `{name}.state_dict()`",
        ),
        "scheduler": (
            "`torch.save` of the LR scheduler object `{name}`, which `weights_only` loading rejects: save `{name}.state_dict()`",
            "`torch.save` 保存了学习率调度器对象 `{name}`，`weights_only` 加载时会拒绝它：请改为保存 `{name}.state_dict()`",
        ),
        "scaler": (
            "`torch.save` of the GradScaler object `{name}`, which `weights_only` loading rejects: save `{name}.state_dict()`",
            "`torch.save` 保存了 GradScaler 对象 `{name}`，`weights_only` 加载时会拒绝它：请改为保存 `{name}.state_dict()`",
        ),
        "numpy": (
            "`torch.save` of the NumPy value `{name}`, which `weights_only` loading rejects: save `float()` of it, `.tolist()` or a tensor",
            "`torch.save` 保存了 NumPy 值 `{name}`，`weights_only` 加载时会拒绝它：请改为保存它的 `float()`、`.tolist()` 或张量",
        ),
        "path": (
            "`torch.save` of the path object `{name}`, which `weights_only` loading rejects: save `str({name})`",
            "`torch.save` 保存了路径对象 `{name}`，`weights_only` 加载时会拒绝它：请改为保存 `str({name})`",
        ),
    }
    why_zh = (
        "从 PyTorch 2.6 起，`torch.load` 默认 `weights_only=True`，只还原张量、数值、字符串和基本容器。"
        "检查点里 pickle 了其他任何东西，无论是否传 `weights_only=True`，都会加载失败：argparse 的"
        " `Namespace`（请保存 `vars(args)`）、优化器、学习率调度器或 `GradScaler` 对象（请保存它们的"
        " `state_dict()`）、NumPy 值（请保存 `float(x)`、`x.tolist()` 或 `torch.from_numpy(x)`）、"
        "`pathlib.Path`（请保存 `str(path)`）。整个模块由 PTT012 负责。在 `torch.save`（或本文件中负责保存的"
        "辅助函数的调用处）报告，指出保存的值、字典或列表字面量，或者构建它的那个变量中第一个这样的对象。"
    )
    tip = "save-load-state-dict"
    VALID = (
        "import torch\ntorch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),"
        " 'args': vars(args), 'best_acc': float(best_acc)}, 'ckpt.pt')\n",
        "import torch\nstate = {'epoch': epoch, 'optimizer_state': optimizer.state_dict()}\n"
        "torch.save(state, path)\n",
    )
    INVALID = (
        Invalid(
            "import argparse\nimport torch\nargs = argparse.ArgumentParser().parse_args()\n"
            "torch.save({'model': model.state_dict(), 'args': args}, 'ckpt.pt')\n",
            instead="import argparse\nimport torch\nargs = argparse.ArgumentParser().parse_args()\n"
            "torch.save({'model': model.state_dict(), 'args': vars(args)}, 'ckpt.pt')\n",
        ),
        "import torch\noptimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)\n"
        "checkpoint = {'model': model.state_dict(), 'optimizer': optimizer, 'epoch': epoch}\n"
        "torch.save(checkpoint, 'last.pt')\n",
        "import numpy as np\nimport torch\nbest_fitness = np.mean(scores)\n"
        "torch.save({'model': model.state_dict(), 'best_fitness': best_fitness}, 'best.pt')\n",
        "import torch\nscheduler = torch.optim.lr_scheduler.StepLR(optimizer, 30)\n\n"
        "def save_checkpoint(state, path):\n    torch.save(state, path)\n\n"
        "save_checkpoint({'model': model.state_dict(), 'scheduler': scheduler}, 'ckpt.pt')\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for where, obj in saved_values(ctx):
            for value in parts(ctx, obj):
                found = rejected(ctx, value)
                if found is not None:
                    kind, name = found
                    yield Report(where, args={"name": name}, variant=kind)
                    break
