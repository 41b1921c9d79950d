"""Generator and discriminator steps of a GAN."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from generator.lint.analysis import Context
from generator.lint.rules.base import Invalid, Report, Rule
from generator.lint.syntax import (
    FUNCTIONS,
    dotted,
    is_const,
    iter_region,
    last_name,
    method_name,
    receiver,
)
from generator.lint.training import node_position

#: The usual names of a generator and a discriminator (``G``, ``netG_A``, ``generator``,
#: ``nets.discriminator``, ``critic``), and of the discriminator's optimizer.
_GENERATOR = re.compile(r"^(g|gen|netg|generator)($|_)", re.I)
_DISCRIMINATOR = re.compile(r"^(d|disc|netd|discriminator|critic)($|_)", re.I)
_D_OPTIMIZER = re.compile(r"(^|_)d($|_)|^optd|optimizerd$|disc|critic|netd", re.I)


#: Calls that switch a network's gradients off: ``requires_grad(generator, False)``
#: (rosinality's StyleGAN2), ``set_requires_grad(netG, False)``, ``G.requires_grad_(False)``.
_FREEZE = {"requires_grad", "requires_grad_", "set_requires_grad", "toggle_grad"}


def _is_generator_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and bool(_GENERATOR.search(last_name(node.func) or ""))


def _is_discriminator_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and bool(_DISCRIMINATOR.search(last_name(node.func) or ""))


def _detached(ctx: Context, node: ast.AST, stop: ast.AST) -> bool:
    """Whether ``node`` reaches ``stop`` only through a ``.detach()`` (or ``.data``)."""
    for anc in ctx.ancestors(node):
        if anc is stop:
            return False
        if isinstance(anc, ast.Attribute) and anc.attr in {"detach", "data"}:
            return True
    return False


class DiscriminatorThroughGenerator(Rule):
    """In a GAN the discriminator's step updates only the discriminator, yet `D(fake)` on a
    generator output that is not detached makes `d_loss.backward()` run the backward pass
    through the whole generator as well: wasted compute, and gradients left in the
    generator's parameters that its own step uses unless they are zeroed first (and they
    push the generator the wrong way). Give the discriminator `fake.detach()` and keep the
    undetached output for the generator's step. Reported when the loss of such a call is
    backpropagated and the discriminator's optimizer (`optimizer_D`, `d_optimizer`, ...)
    steps next; a generator made under `torch.no_grad()`, or frozen with
    `requires_grad_(False)`, is fine."""

    code = "PTT055"
    name = "discriminator-through-generator"
    severity = "warning"
    message = "the discriminator's step backpropagates through the generator: give the discriminator `fake.detach()`"
    message_zh = "判别器的更新步骤让反向传播一路传进了生成器：请把 `fake.detach()` 交给判别器"
    why_zh = (
        "在 GAN 中，判别器的更新步骤只更新判别器，可是对一个没有 detach 的生成器输出调用 `D(fake)`，会让"
        " `d_loss.backward()` 让反向传播一路穿过整个生成器：既浪费计算，又在生成器的参数上留下梯度，"
        "除非先清零，否则生成器自己更新时会用上它们（而它们把生成器往错误的方向推）。请把"
        " `fake.detach()` 交给判别器，未 detach 的输出留给生成器的更新步骤。只有当这样的调用所得的损失"
        "被反向传播、且紧接着更新的是判别器的优化器（`optimizer_D`、`d_optimizer` 等）时才报告；在"
        " `torch.no_grad()` 下生成的假样本，或用 `requires_grad_(False)` 冻结的生成器，都没有问题。"
    )
    tip = "gan-detach-fake-for-discriminator"
    VALID = (
        # the generator's gradients switched off for the discriminator's step (rosinality)
        "requires_grad(generator, False)\nrequires_grad(discriminator, True)\n"
        "fake_img, _ = generator(noise)\nfake_pred = discriminator(fake_img)\n"
        "d_loss = d_logistic_loss(discriminator(real_img), fake_pred)\n"
        "discriminator.zero_grad()\nd_loss.backward()\nd_optim.step()\n",
        "fake = G(z)\nd_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)\n"
        "optimizer_D.zero_grad()\nd_loss.backward()\noptimizer_D.step()\n"
        "g_loss = bce(D(fake), ones)\noptimizer_G.zero_grad()\ng_loss.backward()\noptimizer_G.step()\n",
        "import torch\nwith torch.no_grad():\n    x_fake = nets.generator(x_real, s_trg)\n"
        "d_loss = adv_loss(nets.discriminator(x_fake, y_trg), 0)\nd_loss.backward()\n"
        "optims.discriminator.step()\n",
    )
    INVALID = (
        Invalid(
            "fake = G(z)\nd_loss = bce(D(real), ones) + bce(D(fake), zeros)\n"
            "optimizer_D.zero_grad()\nd_loss.backward()\noptimizer_D.step()\n",
            instead="fake = G(z)\nd_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)\n"
            "optimizer_D.zero_grad()\nd_loss.backward()\noptimizer_D.step()\n"
            "g_loss = bce(D(fake), ones)  # the generator's step keeps the graph\n"
            "optimizer_G.zero_grad()\ng_loss.backward()\noptimizer_G.step()\n",
        ),
        "for images, _ in loader:\n    fake_images = G(torch.randn(images.size(0), 64))\n"
        "    outputs = D(fake_images)\n    d_loss_fake = criterion(outputs, fake_labels)\n"
        "    d_loss = d_loss_real + d_loss_fake\n    d_optimizer.zero_grad()\n"
        "    d_loss.backward()\n    d_optimizer.step()\n",
        "optimizer_D.zero_grad()\nloss_D = (adversarial(netD(real), valid) + adversarial(netD(netG(z)), fake)) / 2\n"
        "loss_D.backward()\noptimizer_D.step()\n",
    )

    def check(self, ctx: Context) -> Iterator[Report]:
        if not ctx.calls_by_method.get("backward"):
            return
        callees = set(ctx.calls_by_method)
        callees |= {
            c.func.id
            for c in ctx.by_type[ast.Call]
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
        }
        if not (
            any(_GENERATOR.search(n) for n in callees)
            and any(_DISCRIMINATOR.search(n) for n in callees)
        ):
            return  # no generator and discriminator called here
        scopes: list[list[ast.stmt]] = [ctx.tree.body]
        scopes += [f.body for t in FUNCTIONS for f in ctx.by_type[t] if isinstance(f, FUNCTIONS)]
        for body in scopes:
            yield from self._scope(ctx, body)

    def _scope(self, ctx: Context, body: list[ast.stmt]) -> Iterator[Report]:
        nodes = sorted(iter_region(body, conditional=True), key=node_position)
        frozen = any(
            isinstance(n, ast.Call)
            and last_name(n.func) in _FREEZE
            and any(is_const(a, False) for a in [*n.args, *(k.value for k in n.keywords)])
            and any(
                isinstance(m, ast.Name | ast.Attribute) and _GENERATOR.search(last_name(m) or "")
                for m in ast.walk(n)
            )
            for n in nodes
        )
        if frozen:
            return
        fakes: set[str] = set()
        for n in nodes:
            if isinstance(n, ast.Assign) and not ctx.in_no_grad(n):
                value = n.value
                if any(_is_generator_call(m) for m in ast.walk(value)) and not (
                    isinstance(value, ast.Call) and method_name(value) == "detach"
                ):
                    for target in n.targets:
                        elts = target.elts if isinstance(target, ast.Tuple) else [target]
                        fakes |= {t for e in elts if (t := dotted(e))}
        for call in nodes:
            if not _is_discriminator_call(call):
                continue
            assert isinstance(call, ast.Call)
            if not any(self._undetached_fake(ctx, arg, call, fakes) for arg in call.args):
                continue
            backward = self._backward_of(ctx, call, nodes)
            if backward is None:
                continue
            step = next(
                (
                    n
                    for n in nodes
                    if isinstance(n, ast.Call)
                    and node_position(n) > node_position(backward)
                    and ctx.loops.is_optimizer_step(n)
                ),
                None,
            )
            if step is not None and _D_OPTIMIZER.search(last_name(receiver(step)) or ""):
                yield Report(call)

    @staticmethod
    def _undetached_fake(ctx: Context, arg: ast.AST, call: ast.Call, fakes: set[str]) -> bool:
        for n in ast.walk(arg):
            if (
                (isinstance(n, ast.Name | ast.Attribute) and dotted(n) in fakes)
                or _is_generator_call(n)
            ) and not _detached(ctx, n, call):
                return True
        return False

    @staticmethod
    def _backward_of(ctx: Context, call: ast.Call, nodes: list[ast.AST]) -> ast.Call | None:
        """The ``backward()`` whose loss is computed from ``call`` (through assignments)."""
        names: set[str] = set()
        for n in nodes:
            if isinstance(n, ast.Call) and ctx.loops.is_backward(n):
                if any(m is call for m in ast.walk(n)):
                    return n
                recv = receiver(n)
                used = {m.id for m in ast.walk(recv) if isinstance(m, ast.Name)} if recv else set()
                used |= {m.id for a in n.args for m in ast.walk(a) if isinstance(m, ast.Name)}
                if used & names:
                    return n
            elif isinstance(n, ast.Assign | ast.AugAssign):
                value = n.value
                if any(m is call for m in ast.walk(value)) or any(
                    isinstance(m, ast.Name) and m.id in names for m in ast.walk(value)
                ):
                    targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                    for target in targets:
                        names |= {m.id for m in ast.walk(target) if isinstance(m, ast.Name)}
        return None
