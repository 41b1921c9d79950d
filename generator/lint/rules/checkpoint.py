"""Checkpoints: what `torch.save` writes, how `torch.load` reads it, and who writes it."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule, add_keyword
from generator.lint.syntax import has_star_kwargs, is_const, kwarg, method_name, receiver

_LOAD = ("torch.load", "torch.serialization.load")
_SAVE = ("torch.save", "torch.serialization.save")
_WRAPPERS = {
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.compile",
    "torch.distributed.fsdp.FullyShardedDataParallel",
}


class TorchLoadWeightsOnly(Rule):
    """`torch.load` unpickles: with `weights_only=False` a checkpoint file can run arbitrary
    code when it is loaded. Since PyTorch 2.6 `weights_only=True` is the default, which
    loads tensors, state dicts and plain containers only; say so explicitly, so the code
    is safe on every version and its intent is visible."""

    code = "PTT011"
    name = "torch-load-weights-only"
    severity = "error"
    message = "`torch.load` without `weights_only=True`: pass it, and save state dicts"
    tip = "save-load-state-dict"
    fixable = True
    fix_safety = "safe"
    VALID = (
        'import torch\nstate = torch.load("ckpt.pt", map_location="cpu", weights_only=True)\n',
        "import torch\nstate = torch.load(path, **load_kwargs)\n",
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
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for call in ctx.calls(*_LOAD):
            if (
                kwarg(call, "weights_only") is None
                and not has_star_kwargs(call)
                and len(call.args) < 5
            ):
                # weights_only=True refuses an explicit pickle_module: report, but do not fix
                custom_pickle = kwarg(call, "pickle_module") is not None or len(call.args) >= 3
                edits = [] if custom_pickle else [add_keyword(ctx.lines, call, "weights_only=True")]
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
    tip = "save-load-state-dict"
    VALID = (
        'import torch\ntorch.save(model.state_dict(), "model.pt")\n',
        'import torch\ntorch.save({"model": model.state_dict(), "step": step}, path)\n',
        "import copy\nimport torch\nbest_model = copy.deepcopy(model.state_dict())\n"
        "torch.save(best_model, 'best.pt')\n",
    )
    INVALID = (
        'import torch\ntorch.save(model, "model.pt")\n',
        "import torch\nfrom torch import nn\nlayer = nn.Linear(4, 4)\ntorch.save(layer, buffer)\n",
        'import torch\ntorch.save(self.model, "model.pt")\n',
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for call in ctx.calls(*_SAVE):
            obj = call.args[0] if call.args else None
            if not isinstance(obj, ast.Name | ast.Attribute) or not ctx.name_is_module(obj):
                continue
            if isinstance(obj, ast.Name) and any(
                isinstance(n, ast.Call) and method_name(n) == "state_dict"
                for value in ctx.assignments.get(obj.id, ())
                for n in ast.walk(value)
            ):
                continue  # best_model = copy.deepcopy(model.state_dict())
            yield Report(call)


class SaveWrapperStateDict(Rule):
    """The `state_dict()` of a `DistributedDataParallel`, `DataParallel` or
    `torch.compile` wrapper prefixes every key (`module.`, `_orig_mod.`), so it does not
    load into the plain model. Save the unwrapped model's state dict
    (`ddp_model.module`, `compiled._orig_mod`)."""

    code = "PTT013"
    name = "save-wrapper-state-dict"
    severity = "info"
    message = "state dict of a DDP/compile wrapper: its keys carry a `module.`/`_orig_mod.` prefix; save the unwrapped model's"
    tip = "save-unwrapped-model"
    VALID = (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        'ddp_model = DDP(model)\ntorch.save(ddp_model.module.state_dict(), "m.pt")\n',
    )
    INVALID = (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        'ddp_model = DDP(model)\ntorch.save(ddp_model.state_dict(), "m.pt")\n',
        'import torch\ncompiled = torch.compile(model)\ntorch.save({"model": compiled.state_dict()}, p)\n',
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for call in ctx.calls(*_SAVE):
            if not call.args:
                continue
            for node in ast.walk(call.args[0]):
                if (
                    isinstance(node, ast.Call)
                    and method_name(node) == "state_dict"
                    and isinstance(receiver(node), ast.Name)
                    and ctx.assigned_from(receiver(node).id, _WRAPPERS)  # type: ignore[union-attr]
                ):
                    yield Report(node)


class SaveOnEveryRank(Rule):
    """In a multi-process job every rank runs the same code: an unguarded `torch.save`
    makes all of them write the same file at once (wasted I/O, and torn files on shared
    storage). Save on rank 0 only, then `barrier()` before anyone reads the file."""

    code = "PTT019"
    name = "save-on-every-rank"
    severity = "info"
    message = "`torch.save` runs on every rank: save on rank 0 only"
    tip = "rank-zero-logging-saving"
    VALID = (
        "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')\n"
        "if dist.get_rank() == 0:\n    torch.save(model.state_dict(), 'm.pt')\n",
        "import torch\nimport torch.distributed as dist\n"
        "dist.init_process_group('gloo', store=store, rank=0, world_size=1)\n"
        "torch.save(model.state_dict(), 'm.pt')\n",
    )
    INVALID = (
        "import torch\nimport torch.distributed as dist\n\ndef main():\n"
        "    dist.init_process_group('nccl')\n    train()\n"
        "    torch.save(model.state_dict(), 'm.pt')\n\n"
        "if __name__ == '__main__':\n    main()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        groups = ctx.calls("torch.distributed.init_process_group")
        if not groups or all(
            is_const(getattr(kwarg(g, "world_size"), "value", None), 1) for g in groups
        ):
            return
        for call in ctx.calls(*_SAVE):
            if ctx.runs_unconditionally(call):
                yield Report(call)
