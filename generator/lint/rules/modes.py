"""Train and eval modes: evaluation left in training mode, training left in evaluation mode."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule
from generator.lint.rules.devices import is_eval_loop
from generator.lint.syntax import FUNCTIONS, dotted, iter_region, last_name, method_name, receiver

#: Copies of a model that are averaged, not trained (an EMA, a teacher): evaluation mode
#: is all they ever need.
_AVERAGED = re.compile(r"(^|[._])(ema|\w*_ema|ema_\w*|teacher\w*|swa\w*|avg\w*|average\w*)$", re.I)


class EvalNeverUndone(Rule):
    """`model.eval()` switches Dropout off and makes BatchNorm use its running statistics
    until `model.train()` switches them back. A loop that evaluates between training steps
    and never calls `train()` trains every later step in evaluation mode. Call
    `model.train()` at the start of each epoch (or restore the mode after evaluating). A
    model put in evaluation mode right before its training loop, on purpose (a linear probe
    that keeps a frozen backbone's BatchNorm statistics), and an averaged copy that is never
    trained (`g_ema`, `teacher`), are left alone."""

    code = "PTT035"
    name = "eval-never-undone"
    severity = "error"
    message = "`model.eval()` runs between training steps but nothing calls `model.train()` again"
    message_zh = "`model.eval()` 在训练步骤之间执行，之后却没有任何地方再调用 `model.train()`"
    why_zh = (
        "`model.eval()` 会关闭 Dropout，并让 BatchNorm 改用滑动统计量，直到 `model.train()` 把它们切换回来。"
        "在训练步骤之间做评估、却从不调用 `train()` 的循环，之后的每一步都在评估模式下训练。请在每个 epoch"
        " 开始时调用 `model.train()`（或者在评估后恢复原来的模式）。在训练循环之前特意切换到评估模式的模型"
        "（例如线性探测时让冻结主干网络的 BatchNorm 统计量保持不变），以及从不训练的平均副本"
        "（`g_ema`、`teacher`），不会报告。"
    )
    tip = "eval-mode-dropout-batchnorm"
    VALID = (
        "def evaluate(model):\n    model.eval()\n    out = model(x)\n    model.train()\n    return out\n\n"
        "for epoch in range(3):\n    for x in data:\n        f(model(x)).backward()\n"
        "        optimizer.step()\n    evaluate(model)\n",
        # a linear probe: the frozen backbone's BatchNorm stays in evaluation mode on purpose
        "def train(loader, model, optimizer):\n    model.eval()\n    for x, y in loader:\n"
        "        f(model(x), y).backward()\n        optimizer.step()\n\n"
        "def validate(loader, model):\n    model.eval()\n    return [model(x) for x, _ in loader]\n\n"
        "for epoch in range(90):\n    train(train_loader, model, optimizer)\n"
        "    validate(val_loader, model)\n",
        # an EMA copy of the generator, sampled in evaluation mode between steps (StyleGAN2)
        "for idx in range(iters):\n    g_loss(generator(noise)).backward()\n    g_optim.step()\n"
        "    accumulate(g_ema, generator)\n    if idx % 100 == 0:\n        g_ema.eval()\n"
        "        sample = g_ema(sample_z)\n",
    )
    INVALID = (
        "def evaluate(model):\n    model.eval()\n    return model(x)\n\n"
        "for epoch in range(3):\n    for x in data:\n        f(model(x)).backward()\n"
        "        optimizer.step()\n    evaluate(model)\n",
        "for epoch in range(3):\n    for x in data:\n        f(model(x)).backward()\n"
        "        optimizer.step()\n    model.eval()\n    validate(model)\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        if ctx.methods("train") or not ctx.loops.training_loops:
            return
        chosen = self._trains_in_eval_mode(ctx)
        for call in ctx.methods("eval"):
            name = dotted(receiver(call))
            if call.args or call.keywords or name in chosen or _AVERAGED.search(name or ""):
                continue  # a training mode chosen on purpose, or a copy that never trains
            sites: list[ast.AST] = [call]
            func = ctx.enclosing_function(call)
            if func is not None:
                sites += [
                    c
                    for c in ctx.by_type[ast.Call]
                    if isinstance(c, ast.Call)
                    and isinstance(c.func, ast.Name)
                    and c.func.id == func.name
                ]
            if any(self._in_training_loop(ctx, s) for s in sites):
                yield Report(call)

    @staticmethod
    def _trains_in_eval_mode(ctx: Context) -> set[str | None]:
        """Models put in evaluation mode on purpose for training: ``model.eval()`` in the
        body of a function before the training loop it runs (a linear probe on a frozen
        backbone keeps BatchNorm's statistics fixed this way)."""
        out: set[str | None] = set()
        for loop in ctx.loops.training_loops:
            func = ctx.enclosing_function(loop)
            body = func.body if func is not None else ctx.tree.body
            top = next((s for s in body if s is loop or loop in ast.walk(s)), None)
            for stmt in body[: body.index(top)] if top is not None else []:
                if (
                    isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Call)
                    and method_name(stmt.value) == "eval"
                ):
                    out.add(dotted(receiver(stmt.value)))
        return out

    @staticmethod
    def _in_training_loop(ctx: Context, node: ast.AST) -> bool:
        for anc in ctx.ancestors(node):
            if isinstance(anc, ast.For | ast.While | ast.AsyncFor) and any(
                ctx.loops.trains(s) for s in anc.body
            ):
                return True
        return False


#: Layers whose forward differs between training and evaluation.
_MODE_LAYERS = re.compile(
    r"^torch\.nn\.(Dropout\w*|AlphaDropout|FeatureAlphaDropout|BatchNorm\w*|SyncBatchNorm|"
    r"InstanceNorm\w*|TransformerEncoderLayer|TransformerDecoderLayer|Transformer)$"
)
_DROPOUT_FUNCS = {
    "torch.nn.functional.dropout",
    "torch.nn.functional.dropout2d",
    "torch.nn.functional.dropout1d",
}
#: Recurrent layers that apply dropout between their stacked layers when given one.
_RNN = {"torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN"}
_EVAL_NAME = re.compile(
    r"(^|_)(val|valid|validate|validation|eval|evaluate|test|inference|predict)(_|$)", re.I
)


def _mode_layers_in(ctx: Context, tree: ast.AST) -> bool:
    """Whether ``tree`` builds a layer that behaves differently in evaluation mode."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        q = ctx.qualname(node.func) or ""
        if _MODE_LAYERS.match(q) or q in _DROPOUT_FUNCS:
            return True
        if q in _RNN and any(k.arg == "dropout" for k in node.keywords):
            return True
    return False


def _class_has_mode_layers(ctx: Context, name: str, seen: set[str]) -> bool:
    """Whether a module class of this file (or one it builds or derives from) holds such a
    layer."""
    if name in seen:
        return False
    seen.add(name)
    for cls in ctx.by_type[ast.ClassDef]:
        assert isinstance(cls, ast.ClassDef)
        if cls.name != name:
            continue
        if _mode_layers_in(ctx, cls):
            return True
        inner = {
            n.func.id
            for n in ast.walk(cls)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in ctx.module_classes
        }
        inner |= {b.id for b in cls.bases if isinstance(b, ast.Name)}
        if any(_class_has_mode_layers(ctx, c, seen) for c in inner):
            return True
    return False


def has_mode_layers(ctx: Context, value: ast.AST) -> bool:
    """Whether an assigned model value builds Dropout or BatchNorm: an `nn.Sequential` of
    them, a module class of this file that holds them, a torchvision model."""
    call = value
    while (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Call)
    ):
        call = call.func.value  # Net().cuda(), Net().to(device)
    if not isinstance(call, ast.Call):
        return False
    q = ctx.qualname(call.func) or ""
    if q.startswith("torchvision.models."):
        return True
    if isinstance(call.func, ast.Name) and call.func.id in ctx.module_classes:
        return _class_has_mode_layers(ctx, call.func.id, set())
    return q.startswith("torch.nn.") and _mode_layers_in(ctx, call)


class EvalWithoutEvalMode(Rule):
    """Dropout and BatchNorm behave differently while training: Dropout zeroes random
    activations and BatchNorm normalises with the statistics of the batch (and updates its
    running ones). Evaluating such a model without `model.eval()` gives noisy scores that
    depend on the other samples of the batch, and overwrites BatchNorm's running statistics
    with the validation data's. `torch.no_grad()` does not change the mode: call
    `model.eval()` before evaluating and `model.train()` before training again. Reported for
    an evaluation (a function under `no_grad`/`inference_mode` or a loop that evaluates) that
    calls a model built in this file with such layers, when nothing in the file ever puts
    that model in evaluation mode."""

    code = "PTT057"
    name = "eval-without-eval-mode"
    severity = "error"
    message = "`{model}` is evaluated without `{model}.eval()`: its Dropout/BatchNorm layers still run as in training"
    message_zh = (
        "评估 `{model}` 之前没有调用 `{model}.eval()`：其中的 Dropout/BatchNorm 层仍按训练模式运行"
    )
    message_args = {"model": "model"}
    why_zh = (
        "Dropout 和 BatchNorm 在训练时的行为不同：Dropout 会随机把激活置零，BatchNorm 用当前批次的统计量做"
        "归一化（并更新它的滑动统计量）。不调用 `model.eval()` 就评估这样的模型，得到的分数带有噪声、还取决于"
        "同一批次中的其他样本，而且会用验证数据覆盖 BatchNorm 的滑动统计量。`torch.no_grad()` 不会改变模式："
        "请在评估之前调用 `model.eval()`，回到训练之前再调用 `model.train()`。只在这种情况下报告：评估"
        "（`no_grad`/`inference_mode` 下的函数，或者做评估的循环）调用了本文件中构建、带有这类层的模型，"
        "而文件中从未把这个模型切换到评估模式。"
    )
    tip = "eval-mode-dropout-batchnorm"
    VALID = (
        "import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))\n\n"
        "@torch.no_grad()\ndef evaluate(model, x):\n    model.eval()\n    out = model(x)\n"
        "    model.train()\n    return out\n",
        # a model with no Dropout or BatchNorm behaves the same in both modes
        "import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Linear(8, 8), nn.ReLU())\n\n"
        "@torch.no_grad()\ndef evaluate(model, x):\n    return model(x)\n",
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torch import nn\n"
            "model = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.Dropout(0.5), nn.Linear(32, 3))\n\n"
            "@torch.no_grad()\ndef evaluate(model, loader):\n"
            "    return sum((model(x).argmax(1) == y).sum() for x, y in loader)\n\n"
            "accuracy = evaluate(model, val_loader)\n",
            instead="import torch\nfrom torch import nn\n"
            "model = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.Dropout(0.5), nn.Linear(32, 3))\n\n"
            "@torch.no_grad()\ndef evaluate(model, loader):\n    model.eval()\n"
            "    try:\n        return sum((model(x).argmax(1) == y).sum() for x, y in loader)\n"
            "    finally:\n        model.train()\n\n"
            "accuracy = evaluate(model, val_loader)\n",
        ),
        # a class of the file with Dropout, evaluated in a loop under no_grad
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(784, 10)\n        self.drop = nn.Dropout(0.2)\n\n"
        "    def forward(self, x):\n        return self.fc(self.drop(x))\n\n"
        "net = Net().to(device)\nwith torch.no_grad():\n    for x, y in test_loader:\n"
        "        correct += (net(x.to(device)).argmax(1) == y.to(device)).sum()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        switched = {
            dotted(receiver(c))
            for c in [*ctx.methods("eval"), *ctx.methods("train"), *ctx.methods("requires_grad_")]
            if not (method_name(c) == "train" and not c.args)
        }
        seen: set[str] = set()
        for region, func in self._evaluations(ctx):
            for node in iter_region(region, conditional=True):
                if not (
                    isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
                ):
                    continue
                name = dotted(node.func)
                if name is None or name in switched or name in seen or _AVERAGED.search(name):
                    continue
                for value, written in self._models(ctx, node.func, func):
                    if written not in switched and has_mode_layers(ctx, value):
                        seen.add(name)
                        yield Report(node, args={"model": written})
                        break

    @staticmethod
    def _evaluations(
        ctx: Context,
    ) -> Iterator[tuple[list[ast.stmt], ast.FunctionDef | ast.AsyncFunctionDef | None]]:
        """Evaluation code: the body of a function under ``no_grad``/``inference_mode``
        (a decorator) that trains nothing, and each evaluation loop."""
        for kind in FUNCTIONS:
            for func in ctx.by_type[kind]:
                assert isinstance(func, FUNCTIONS)
                if any(ctx.is_no_grad(d) for d in func.decorator_list) and not ctx.loops.trains(
                    func
                ):
                    yield func.body, func
        training = set(ctx.loops.training_loops)
        for loop_kind in (ast.For, ast.While):
            for loop in ctx.by_type[loop_kind]:
                assert isinstance(loop, ast.For | ast.While)
                if loop in training or any(a in training for a in ctx.ancestors(loop)):
                    continue
                if is_eval_loop(ctx, loop):
                    scope = ctx.enclosing_function(loop)
                    if scope is None or not any(ctx.is_no_grad(d) for d in scope.decorator_list):
                        yield [loop], scope

    @staticmethod
    def _models(
        ctx: Context, callee: ast.AST, func: ast.FunctionDef | ast.AsyncFunctionDef | None
    ) -> list[tuple[ast.AST, str]]:
        """(a value the called name was assigned, the name as the caller wrote it): a name
        of the file, or a parameter of ``func`` followed to the arguments its callers pass."""
        if not isinstance(callee, ast.Name):
            return []
        if func is None:
            return [(v, callee.id) for v in ctx.assignments.get(callee.id, [])]
        params = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
        if callee.id not in params:
            return [(v, callee.id) for v in ctx.assignments.get(callee.id, [])]
        index = params.index(callee.id)
        out: list[tuple[ast.AST, str]] = []
        for call in ctx.by_type[ast.Call]:
            assert isinstance(call, ast.Call)
            if last_name(call.func) == func.name and index < len(call.args):
                arg = call.args[index]
                if isinstance(arg, ast.Name):
                    out += [(v, arg.id) for v in ctx.assignments.get(arg.id, [])]
        return out
