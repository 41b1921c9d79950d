"""Which names of a file hold an ``nn.Module``: `ModuleNames` (``ctx.modules``), read from
the file's names, assignments, classes and the methods called on each name."""

from __future__ import annotations

import ast
import re
from functools import cached_property
from typing import TYPE_CHECKING

from generator.lint.syntax import last_name

if TYPE_CHECKING:
    from generator.lint.analysis import Context

#: Names that usually hold an ``nn.Module``.
MODEL_NAME = re.compile(
    r"^(?:.*_)?(?:model|net|network|module|encoder|decoder|backbone|classifier)$", re.I
)
#: Names of functions that act on a model (``evaluate_model``, ``build_model``): a call of one
#: returns what the function computes, not a model's output.
_VERB = re.compile(
    r"^(?:build|create|get|load|make|init|initialize|evaluate|eval|train|test|validate|save|"
    r"run|fit|prepare|setup|set|update|copy|export|freeze|unfreeze|wrap|unwrap|print|show|"
    r"log|compile|convert|count|summarize|check|reset|to|from|apply|register)_",
    re.I,
)


class ModuleNames:
    """What holds a module in one file (``ctx.modules``)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def is_module(self, node: ast.AST) -> bool:
        """Whether ``node`` looks like an ``nn.Module``: a model-like name, or a name bound
        to an ``nn`` layer, a wrapper or a class of this file that subclasses one."""
        name = last_name(node)
        if name is None:
            return False
        if isinstance(node, ast.Name) and (
            name in self.ctx.functions or (_VERB.match(name) and name not in self.ctx.assignments)
        ):
            return False  # a function (`evaluate_model(...)`, `build_model(cfg)`), not a module
        if MODEL_NAME.match(name):
            return True
        if isinstance(node, ast.Name):
            if node.id in self._used_as_module:
                return True
            for value in self.ctx.assignments.get(node.id, ()):
                call: ast.AST | None = value
                while isinstance(call, ast.Call):
                    q = self.ctx.qualname(call.func)
                    if q and q.startswith("torch.nn.") and q.rsplit(".", 1)[1][:1].isupper():
                        return True
                    if isinstance(call.func, ast.Name) and call.func.id in self.classes:
                        return True
                    call = call.func.value if isinstance(call.func, ast.Attribute) else None
        return False

    @cached_property
    def _used_as_module(self) -> set[str]:
        """Names whose methods only a module has are called (``policy.parameters()``,
        ``policy.eval()``)."""
        out = {
            recv.id
            for name in (
                "parameters",
                "named_parameters",
                "modules",
                "named_modules",
                "children",
                "eval",
            )
            for call in self.ctx.calls_by_method.get(name, ())
            if isinstance(call.func, ast.Attribute)
            and isinstance(recv := call.func.value, ast.Name)
            and not call.args
        }
        # a class instance that loads a state dict: a module (an optimizer is built by torch.optim)
        for call in self.ctx.calls_by_method.get("load_state_dict", ()):
            owner = call.func.value if isinstance(call.func, ast.Attribute) else None
            if isinstance(owner, ast.Name) and any(
                self._constructs(v) for v in self.ctx.assignments.get(owner.id, ())
            ):
                out.add(owner.id)
        return out

    def _constructs(self, value: ast.AST) -> bool:
        """Whether ``value`` builds an object of a class (``WaveGlow(**cfg).cuda()``), not an
        optimizer or a scaler."""
        while (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Call)
        ):
            value = value.func.value  # through .cuda(), .to(device), .eval()
        if not isinstance(value, ast.Call):
            return False
        q = self.ctx.qualname(value.func) or ""
        return (last_name(value.func) or "")[:1].isupper() and not q.startswith(
            ("torch.optim", "torch.amp", "torch.cuda")
        )

    @cached_property
    def classes(self) -> set[str]:
        """Classes of this file that subclass ``nn.Module`` (directly or through each other)."""
        classes = [c for c in self.ctx.by_type[ast.ClassDef] if isinstance(c, ast.ClassDef)]
        out: set[str] = set()
        changed = True
        while changed:
            changed = False
            for cls in classes:
                if cls.name in out:
                    continue
                for base in cls.bases:
                    q = self.ctx.qualname(base) or ""
                    if (q.startswith("torch.nn.") and q.rsplit(".", 1)[1][:1].isupper()) or (
                        isinstance(base, ast.Name) and base.id in out
                    ):
                        out.add(cls.name)
                        changed = True
                        break
        return out
