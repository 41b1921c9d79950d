"""How models are built, wrapped, initialised and written."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule
from generator.lint.syntax import FUNCTIONS, has_star_kwargs, is_const, kwarg, method_name, receiver

_CONV = {f"torch.nn.Conv{d}d" for d in (1, 2, 3)} | {
    f"torch.nn.ConvTranspose{d}d" for d in (1, 2, 3)
}
_BN = {f"torch.nn.BatchNorm{d}d" for d in (1, 2, 3)} | {"torch.nn.SyncBatchNorm"}
_DDP = {
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
}


def _is_module_call(ctx: Context, node: ast.AST) -> bool:
    """``nn.Linear(...)``, ``nn.Parameter(...)`` or a call of a module class of this file."""
    if not isinstance(node, ast.Call):
        return False
    q = ctx.qualname(node.func) or ""
    if q.startswith("torch.nn.") and q.rsplit(".", 1)[1][:1].isupper():
        return True
    return isinstance(node.func, ast.Name) and node.func.id in ctx.module_classes


def _self_attr(node: ast.AST | None) -> str | None:
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):
        return node.attr
    return None


class ModulesInPlainContainer(Rule):
    """`nn.Module` registers submodules assigned as attributes, and `nn.ModuleList` /
    `nn.ModuleDict` contents, but not modules inside a plain `list` or `dict`: their
    parameters are missing from `model.parameters()` (never trained), from `state_dict()`
    (never saved) and from `.to(device)`. Use `nn.ModuleList` / `nn.ModuleDict` (and
    `nn.ParameterList` for parameters)."""

    code = "PTT037"
    name = "modules-in-plain-container"
    severity = "error"
    message = (
        "modules in a plain list or dict are not registered: use `nn.ModuleList` / `nn.ModuleDict`"
    )
    message_zh = "放在普通 list 或 dict 里的模块不会被注册：请用 `nn.ModuleList` / `nn.ModuleDict`"
    why_zh = (
        "`nn.Module` 会注册作为属性赋值的子模块，以及 `nn.ModuleList` / `nn.ModuleDict` 中的内容，但不会"
        "注册普通 `list` 或 `dict` 中的模块：它们的参数不在 `model.parameters()` 中（永远不会被训练），"
        "不在 `state_dict()` 中（永远不会被保存），也不会随 `.to(device)` 移动。请使用 `nn.ModuleList` /"
        " `nn.ModuleDict`（参数则用 `nn.ParameterList`）。"
    )
    tip = "module-list-not-python-list"
    VALID = (
        "from torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))\n"
        "        self.sizes = [4, 4, 4]\n",
    )
    INVALID = (
        "from torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.blocks = [nn.Linear(4, 4) for _ in range(3)]\n",
        "from torch import nn\n\nclass Block(nn.Module):\n    pass\n\nclass Net(Block):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.heads = {'a': Block(), 'b': Block()}\n",
        "from torch import nn\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.layers = []\n        for _ in range(n):\n"
        "            self.layers.append(nn.Linear(4, 4))\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for cls in ctx.by_type[ast.ClassDef]:
            assert isinstance(cls, ast.ClassDef)
            if cls.name not in ctx.module_classes:
                continue
            plain: set[str] = set()
            for node in ast.walk(cls):
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    attr = _self_attr(node.targets[0])
                    if attr is None:
                        continue
                    value = node.value
                    if isinstance(value, ast.List | ast.Tuple):
                        elements: list[ast.AST] = list(value.elts)
                        if not elements:
                            plain.add(attr)
                    elif isinstance(value, ast.ListComp):
                        elements = [value.elt]
                    elif isinstance(value, ast.Dict):
                        elements = [v for v in value.values if v is not None]
                        if not elements:
                            plain.add(attr)
                    elif isinstance(value, ast.DictComp):
                        elements = [value.value]
                    else:
                        continue
                    if any(_is_module_call(ctx, e) for e in elements):
                        yield Report(node)
                elif (
                    isinstance(node, ast.Call)
                    and method_name(node) == "append"
                    and _self_attr(receiver(node)) in plain
                    and node.args
                    and _is_module_call(ctx, node.args[0])
                ):
                    yield Report(node)


class DataParallel(Rule):
    """`nn.DataParallel` drives every GPU from one Python process: each step it copies the
    weights to every GPU, scatters the batch and gathers the outputs on the first one,
    and the GIL serialises the work. `DistributedDataParallel`, one process per GPU, is
    faster even on a single machine. The functional form,
    `torch.nn.parallel.data_parallel(model, x)`, does all of that on every call: in a loop
    it replicates the model once per step."""

    code = "PTT038"
    name = "data-parallel"
    severity = "warning"
    message = "`nn.DataParallel` is single-process and slow: use `DistributedDataParallel` under `torchrun`"
    message_zh = (
        "`nn.DataParallel` 是单进程的，速度慢：请在 `torchrun` 下改用 `DistributedDataParallel`"
    )
    why_zh = (
        "`nn.DataParallel` 用一个 Python 进程驱动所有 GPU：每一步都要把权重复制到每块 GPU、把批次拆开分发、"
        "再把输出收集到第一块 GPU 上，而 GIL 又让这些工作串行执行。`DistributedDataParallel` 每块 GPU"
        " 一个进程，即使在单机上也更快。函数形式的 `torch.nn.parallel.data_parallel(model, x)` 每次调用都要"
        "做这一整套工作：在循环里，它每一步都要复制一次模型。"
    )
    variants = {
        "functional": (
            "`data_parallel(model, x)` replicates the model to every GPU on each call: use `DistributedDataParallel` under `torchrun`",
            "`data_parallel(model, x)` 每次调用都把模型复制到每块 GPU：请在 `torchrun` 下改用 `DistributedDataParallel`",
        )
    }
    tip = "ddp-over-dataparallel"
    VALID = (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model, device_ids=[rank])\n",
        "from torch import nn\nif isinstance(model, nn.DataParallel):\n    model = model.module\n",
        # one call outside any loop: a single replication
        "from torch.nn.parallel import data_parallel\nsummary = data_parallel(model, sample_batch)\n",
    )
    INVALID = (
        "from torch import nn\nmodel = nn.DataParallel(model).cuda()\n",
        "import torch\nmodel = torch.nn.parallel.DataParallel(model, device_ids=[0, 1])\n",
        # the functional form, called on every step
        "from torch.nn.parallel.data_parallel import data_parallel\nfor images, labels in loader:\n"
        "    out = data_parallel(model, images.cuda())\n    criterion(out, labels.cuda()).backward()\n"
        "    optimizer.step()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        names = (
            "torch.nn.DataParallel",
            "torch.nn.parallel.DataParallel",
            "torch.nn.parallel.data_parallel.DataParallel",
        )
        yield from (Report(c) for c in ctx.calls(*names))
        functional = (
            "torch.nn.parallel.data_parallel",
            "torch.nn.parallel.data_parallel.data_parallel",
        )
        for call in ctx.calls(*functional):
            # in a loop, or in a function (a forward, a step): once per step, replicated each time
            if any(isinstance(a, (ast.For, ast.While, *FUNCTIONS)) for a in ctx.ancestors(call)):
                yield Report(call, variant="functional")


class DdpFindUnusedParameters(Rule):
    """`find_unused_parameters=True` makes DDP walk the autograd graph after every forward
    pass to find parameters that will get no gradient. Leave it off when every parameter
    is used every step; when the same ones are always unused, freeze them or pass
    `static_graph=True`."""

    code = "PTT039"
    name = "ddp-find-unused-parameters"
    severity = "warning"
    message = "`find_unused_parameters=True` searches the graph every step: freeze unused parameters or use `static_graph=True`"
    message_zh = "`find_unused_parameters=True` 每一步都要遍历计算图：请冻结未使用的参数，或使用 `static_graph=True`"
    why_zh = (
        "`find_unused_parameters=True` 让 DDP 在每次前向传播之后遍历自动求导图，找出得不到梯度的参数。"
        "如果每一步都用到所有参数，就关掉它；如果总是同一批参数用不到，就冻结它们，或者传 `static_graph=True`。"
    )
    tip = "ddp-find-unused-parameters"
    VALID = (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nm = DDP(model, static_graph=True)\n",
    )
    INVALID = (
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "m = DDP(model, device_ids=[0], find_unused_parameters=True)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for call in ctx.calls(*_DDP):
            kw = kwarg(call, "find_unused_parameters")
            if kw is not None and is_const(kw.value, True):
                yield Report(kw)


def _conv_with_bias(ctx: Context, node: ast.AST) -> bool:
    if not (isinstance(node, ast.Call) and ctx.qualname(node.func) in _CONV):
        return False
    kw = kwarg(node, "bias")
    if kw is not None:
        return is_const(kw.value, True)
    if len(node.args) >= 8:
        return is_const(node.args[7], True)
    return not has_star_kwargs(node)


def _sequential(ctx: Context, node: ast.AST | None) -> bool:
    """``self`` in a subclass of ``nn.Sequential``, or a name assigned ``nn.Sequential()``:
    the order of ``add_module`` is the order of the forward pass."""
    if isinstance(node, ast.Name) and node.id == "self":
        for anc in ctx.ancestors(node):
            if isinstance(anc, ast.ClassDef):
                return any(ctx.qualname(b) == "torch.nn.Sequential" for b in anc.bases)
        return False
    if isinstance(node, ast.Name):
        return any(
            isinstance(v, ast.Call) and ctx.qualname(v.func) == "torch.nn.Sequential"
            for v in ctx.assignments.get(node.id, ())
        )
    return False


def _is_bn(ctx: Context, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ctx.qualname(node.func) in _BN


class ConvBiasBeforeBatchNorm(Rule):
    """BatchNorm subtracts the per-channel mean, which cancels any per-channel bias added
    just before it, and then adds its own `beta`. A convolution's `bias=True` (the
    default) in front of BatchNorm is a wasted parameter per channel and a wasted add per
    element: pass `bias=False`. Changing it changes the `state_dict` keys, so there is no
    automatic fix. Found in `nn.Sequential(...)`, in a module's `forward`, and in
    consecutive `add_module` calls on a `Sequential` (a subclass's `self`, or an
    `nn.Sequential()` being filled)."""

    code = "PTT040"
    name = "conv-bias-before-batchnorm"
    severity = "warning"
    message = "convolution with a bias directly before BatchNorm: pass `bias=False`"
    message_zh = "BatchNorm 紧跟在带偏置的卷积之后：请给卷积传 `bias=False`"
    why_zh = (
        "BatchNorm 会减去每个通道的均值，把紧挨在它前面的逐通道偏置抵消掉，然后再加上自己的 `beta`。"
        "放在 BatchNorm 前面的卷积使用 `bias=True`（默认值），每个通道白白多一个参数，每个元素白白多一次"
        "加法：请传 `bias=False`。这样改会改变 `state_dict` 的键，所以没有自动修复。"
    )
    tip = "conv-bias-before-batchnorm"
    VALID = (
        "from torch import nn\nblock = nn.Sequential(nn.Conv2d(3, 16, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU())\n",
        "from torch import nn\nblock = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.BatchNorm2d(16))\n",
    )
    INVALID = (
        Invalid(
            "from torch import nn\nblock = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16))\n",
            instead="from torch import nn\n"
            "block = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16))\n",
        ),
        "from torch import nn\n\nclass Stem(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 64, 7, stride=2)\n        self.bn = nn.BatchNorm2d(64)\n\n"
        "    def forward(self, x):\n        return self.bn(self.conv(x))\n",
        "from torch import nn\n\nclass Stem(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 64, 7, bias=True)\n        self.bn = nn.BatchNorm2d(64)\n\n"
        "    def forward(self, x):\n        x = self.conv(x)\n        x = self.bn(x)\n        return x\n",
        # a Sequential filled with add_module, as DenseNet-style blocks write it
        "from torch import nn\n\nclass ConvBlock(nn.Sequential):\n    def __init__(self, cin, cout):\n"
        "        super().__init__()\n        self.add_module('conv', nn.Conv2d(cin, cout, 3, padding=1))\n"
        "        self.add_module('norm', nn.BatchNorm2d(cout))\n        self.add_module('relu', nn.ReLU())\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for call in ctx.calls("torch.nn.Sequential"):
            for first, second in zip(call.args, call.args[1:], strict=False):
                if _conv_with_bias(ctx, first) and _is_bn(ctx, second):
                    yield Report(first)
        yield from self._added(ctx)
        for cls in ctx.by_type[ast.ClassDef]:
            assert isinstance(cls, ast.ClassDef)
            if cls.name in ctx.module_classes:
                yield from self._in_class(ctx, cls)

    @staticmethod
    def _added(ctx: Context) -> Iterator[Report]:
        """Consecutive ``add_module`` calls on a Sequential: a conv with a bias, then BN."""
        for block in ctx.blocks:
            calls = [
                s.value
                for s in block
                if isinstance(s, ast.Expr)
                and isinstance(s.value, ast.Call)
                and method_name(s.value) == "add_module"
                and len(s.value.args) == 2
            ]
            statements = [id(s) for s in block]
            for first, second in zip(calls, calls[1:], strict=False):
                recv_first, recv_second = receiver(first), receiver(second)
                same = (
                    recv_first is not None
                    and recv_second is not None
                    and ast.dump(recv_first) == ast.dump(recv_second)
                )
                adjacent = (
                    statements.index(id(ctx.parent(second)))
                    == statements.index(id(ctx.parent(first))) + 1
                )
                if (
                    same
                    and adjacent
                    and _sequential(ctx, receiver(first))
                    and _conv_with_bias(ctx, first.args[1])
                    and _is_bn(ctx, second.args[1])
                ):
                    yield Report(first.args[1])

    def _in_class(self, ctx: Context, cls: ast.ClassDef) -> Iterator[Report]:
        convs: dict[str, ast.AST] = {}
        bns: set[str] = set()
        for node in ast.walk(cls):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                attr = _self_attr(node.targets[0])
                if attr and _conv_with_bias(ctx, node.value):
                    convs[attr] = node.value
                elif attr and _is_bn(ctx, node.value):
                    bns.add(attr)
        if not convs or not bns:
            return
        for func in cls.body:
            if not (isinstance(func, ast.FunctionDef) and func.name == "forward"):
                continue
            for node in ast.walk(func):
                # self.bn(self.conv(x))
                if isinstance(node, ast.Call) and _self_attr(node.func) in bns and node.args:
                    inner = node.args[0]
                    if isinstance(inner, ast.Call) and (conv := _self_attr(inner.func)) in convs:
                        yield Report(convs[conv])
            for block in [func.body]:
                for a, b in zip(block, block[1:], strict=False):
                    # x = self.conv(x); x = self.bn(x)
                    if (
                        isinstance(a, ast.Assign)
                        and isinstance(b, ast.Assign)
                        and isinstance(a.value, ast.Call)
                        and isinstance(b.value, ast.Call)
                        and (conv := _self_attr(a.value.func)) in convs
                        and _self_attr(b.value.func) in bns
                        and len(a.targets) == 1
                        and isinstance(a.targets[0], ast.Name)
                        and b.value.args
                        and isinstance(b.value.args[0], ast.Name)
                        and b.value.args[0].id == a.targets[0].id
                    ):
                        yield Report(convs[conv])


class InitChildrenOnly(Rule):
    """`model.children()` yields only the direct submodules, so an initialisation loop
    over it skips every layer nested in a block. `model.apply(init_fn)` (or a loop over
    `model.modules()`) reaches every submodule."""

    code = "PTT041"
    name = "init-children-only"
    severity = "error"
    message = (
        "initialisation loop over `.children()` skips nested layers: use `model.apply(init_fn)`"
    )
    message_zh = "在 `.children()` 上循环做初始化会漏掉嵌套的层：请用 `model.apply(init_fn)`"
    why_zh = (
        "`model.children()` 只给出直接子模块，所以在它上面循环做初始化，会跳过嵌套在 block 里的每一层。"
        "`model.apply(init_fn)`（或者在 `model.modules()` 上循环）会遍历所有子模块。"
    )
    tip = "weight-init-apply"
    VALID = (
        "from torch import nn\nfor m in model.modules():\n    if isinstance(m, nn.Linear):\n"
        "        nn.init.zeros_(m.bias)\n",
        "for name, child in model.named_children():\n    print(name)\n",
    )
    INVALID = (
        Invalid(
            "from torch import nn\nfor m in model.children():\n    if isinstance(m, nn.Conv2d):\n"
            "        nn.init.kaiming_normal_(m.weight)\n",
            instead="from torch import nn\n\ndef init_weights(m):\n    if isinstance(m, nn.Conv2d):\n"
            "        nn.init.kaiming_normal_(m.weight)\n\nmodel.apply(init_weights)\n",
        ),
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        for loop in ctx.by_type[ast.For]:
            assert isinstance(loop, ast.For)
            it = loop.iter
            if not (isinstance(it, ast.Call) and method_name(it) in {"children", "named_children"}):
                continue
            if any(
                isinstance(n, ast.Call)
                and (ctx.qualname(n.func) or "").startswith("torch.nn.init.")
                for n in ast.walk(loop)
            ):
                yield Report(it)
