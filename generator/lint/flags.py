"""Command-line flags (and config fields) whose default the file states as a literal:
`Flags` (``ctx.flags``). ``parser.add_argument("--name", default=True)``,
``action="store_true"`` (False) or ``store_false`` (True), a dataclass field ``name: bool =
True`` (with tyro's ``--kebab-case`` spelling when the file imports tyro). A rule that
reads ``args.name`` can then report with the default named ("with the default
``--torch-deterministic True``")."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from generator.lint.syntax import is_const, kwarg

if TYPE_CHECKING:
    from generator.lint.analysis import Context


@dataclass(frozen=True)
class FlagDefault:
    """The literal default of a command-line flag (or config field) and how it is written."""

    value: object
    #: ``--torch-deterministic`` as the parser spells it, or ``torch_deterministic``.
    written: str

    def describe(self) -> str:
        """``--torch-deterministic True``: the flag and its default, as a message names them."""
        return f"{self.written} {self.value!r}"


class Flags:
    """The flags of one file with their literal defaults (``ctx.flags``)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @cached_property
    def _defaults(self) -> dict[str, FlagDefault]:
        out: dict[str, FlagDefault] = {}
        seen: dict[str, int] = {}
        for call in self.ctx.methods("add_argument"):
            dest, written = _dest(call)
            if dest is None:
                continue
            seen[dest] = seen.get(dest, 0) + 1
            action = getattr(kwarg(call, "action"), "value", None)
            default = kwarg(call, "default")
            if default is not None and isinstance(default.value, ast.Constant):
                out[dest] = FlagDefault(default.value.value, written)
            elif default is None and isinstance(action, ast.Constant):
                if action.value == "store_true":
                    out[dest] = FlagDefault(False, written)
                elif action.value == "store_false":
                    out[dest] = FlagDefault(True, written)
        tyro = any(q.split(".")[0] == "tyro" for q in self.ctx.imports.values())
        for cls in self.ctx.by_type[ast.ClassDef]:
            assert isinstance(cls, ast.ClassDef)
            if not any("dataclass" in (ast.unparse(d)) for d in cls.decorator_list):
                continue
            for stmt in cls.body:
                if (
                    isinstance(stmt, ast.AnnAssign)
                    and isinstance(stmt.target, ast.Name)
                    and isinstance(stmt.value, ast.Constant)
                ):
                    name = stmt.target.id
                    seen[name] = seen.get(name, 0) + 1
                    # tyro turns a field into a --kebab-case option
                    written = f"--{name.replace('_', '-')}" if tyro else name
                    out[name] = FlagDefault(stmt.value.value, written)
        return {k: v for k, v in out.items() if seen[k] == 1}

    def default(self, node: ast.AST | None) -> FlagDefault | None:
        """The literal default of ``args.name`` (any receiver named in the file) where one
        argument or dataclass field of the file defines ``name``."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return self._defaults.get(node.attr)
        return None

    def literal_or_default(self, node: ast.AST | None, value: object) -> FlagDefault | bool:
        """True when ``node`` is the literal ``value``; the flag's default when it is a flag
        whose literal default is ``value``; else False."""
        if is_const(node, value):
            return True
        default = self.default(node)
        if default is not None and type(default.value) is type(value) and default.value == value:
            return default
        return False


def _dest(call: ast.Call) -> tuple[str | None, str]:
    """(dest, first long option) of ``parser.add_argument("-x", "--x-y", dest=...)``."""
    options = [
        a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
    ]
    if not options:
        return None, ""
    long = next((o for o in options if o.startswith("--")), options[0])
    dest_kw = kwarg(call, "dest")
    if dest_kw is not None and isinstance(dest_kw.value, ast.Constant):
        return str(dest_kw.value.value), long
    if not long.startswith("-"):
        return long, long  # a positional argument
    return long.lstrip("-").replace("-", "_"), long
