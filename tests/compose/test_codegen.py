"""The composer's typed option fields (``option_fields.py``) are generated from the catalog:
the committed module is today's, it declares every kind of option, and ``check`` fails while
it is stale."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import typing

import pytest

from generator import paths
from generator.cli import main
from generator.compose import codegen
from generator.compose.option_types import Feature, Option
from generator.compose.options import OPTIONS, ComposeOptions


def test_the_committed_module_is_the_catalogs() -> None:
    assert codegen.FIELDS_MODULE.read_text(encoding="utf-8") == codegen.fields_module()
    assert [(f.name, f.default) for f in dataclasses.fields(ComposeOptions)] == [
        (o.name, o.default) for o in OPTIONS
    ]


#: Choices too many for one line of the formatter's width.
LONG = ("first-value", "second-value", "third-value", "fourth-value", "fifth-value", "sixth-value")


def test_every_kind_of_option_gets_its_type(monkeypatch: pytest.MonkeyPatch) -> None:
    """A flag is a bool, a number its type (or None when off by default), a choice the literal
    of its values: an option added to the catalog comes out typed."""
    new = (
        Option("on", "flag", False, {"en": "", "zh": ""}),
        Option("steps", "int", 3, {"en": "", "zh": ""}, metavar="N"),
        Option("rate", "float", None, {"en": "", "zh": ""}, metavar="X"),
        Option("mode", "choice", None, {"en": "", "zh": ""}, choices=("a", "b"), const="a"),
        Option(
            "kind", "choice", "auto", {"en": "", "zh": ""}, choices=("x",), features=(Feature("x"),)
        ),
        Option("long_choice", "choice", "first-value", {"en": "", "zh": ""}, choices=LONG),
        Option("long_optional", "choice", None, {"en": "", "zh": ""}, choices=LONG[:5]),
    )
    monkeypatch.setattr(codegen, "OPTIONS", new)
    namespace: dict[str, object] = {}
    source = codegen.fields_module()
    exec(compile(source, "option_fields.py", "exec"), namespace)
    fields_ = typing.cast(type, namespace["OptionFields"])
    hints = typing.get_type_hints(fields_, namespace)
    assert typing.get_args(hints.pop("long_choice")) == LONG
    assert typing.get_args(typing.get_args(hints.pop("long_optional"))[0]) == LONG[:5]
    assert hints == {
        "on": bool,
        "steps": int,
        "rate": float | None,
        "mode": typing.Literal["a", "b"] | None,
        "kind": typing.Literal["x", "auto"],
    }
    assert dataclasses.asdict(fields_()) == {
        "on": False,
        "steps": 3,
        "rate": None,
        "mode": None,
        "kind": "auto",
        "long_choice": "first-value",
        "long_optional": None,
    }
    formatted = subprocess.run(  # the module is written as the formatter writes it
        [sys.executable, "-m", "ruff", "format", "--check", "--diff", "--stdin-filename", "x.py"],
        input=source,
        capture_output=True,
        text=True,
        cwd=paths.ROOT,
        timeout=60,
    )
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


def test_check_fails_while_the_module_is_stale(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "option_fields.py"
    stale.write_text(codegen.fields_module().replace("    ddp: bool = False\n", ""), "utf-8")
    monkeypatch.setattr(codegen, "FIELDS_MODULE", stale)
    assert main(["check"]) == 1
    assert f"stale: {stale} (out of date)" in capsys.readouterr().err
