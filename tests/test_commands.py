"""Commands are registered in one place: each capability's ``COMMANDS``, in its own order,
and `generator.cli.CAPABILITIES`. A command added to a ``COMMANDS`` is offered and runs; a
capability's ``cli`` module missing from the tuple, or a name defined twice, fails here."""

from __future__ import annotations

import argparse
import importlib
import re
from types import ModuleType

import pytest

from generator import cli, paths
from generator.command import Command

SOURCES = {"generator.cli": cli, **{m.__name__: m for m in cli.CAPABILITIES}}


def _help(capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    return capsys.readouterr().out


@pytest.mark.parametrize("source", SOURCES)
def test_a_command_added_to_a_commands_table_is_offered_and_runs(
    source: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The review's mutation: a new entry in a capability's COMMANDS, and nothing else."""
    ran: list[argparse.Namespace] = []

    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--n")

    def handler(args: argparse.Namespace) -> int:
        ran.append(args)
        return 0

    probe = Command("A probe command.", arguments, handler)
    monkeypatch.setitem(SOURCES[source].COMMANDS, "probe", probe)
    assert re.search(r"^    probe +A probe command\.$", _help(capsys), re.MULTILINE)
    assert cli.main(["probe", "--n", "3"]) == 0
    assert [a.n for a in ran] == ["3"]


def test_help_lists_the_commands_in_the_tables_order(capsys: pytest.CaptureFixture[str]) -> None:
    out = _help(capsys)
    expected = [n for m in SOURCES.values() for n in m.COMMANDS]
    listed = [
        line.split()[0] for line in out.splitlines() if line.startswith("    ") and line[4] != " "
    ]
    assert listed == expected
    assert expected[:2] == ["validate", "search"]


def test_every_capability_with_commands_is_in_the_tuple() -> None:
    """A new capability (``generator/doctor/cli.py``) needs its line in CAPABILITIES."""
    found = set()
    for path in sorted(paths.PACKAGE.glob("*/cli.py")):
        module = importlib.import_module(f"generator.{path.parent.name}.cli")
        if hasattr(module, "COMMANDS"):
            found.add(module)
    assert found == set(cli.CAPABILITIES)
    assert len(cli.CAPABILITIES) == len(found)  # each once


def test_a_module_left_out_of_the_tuple_is_found(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: a capability whose cli module is not in CAPABILITIES."""
    monkeypatch.setattr(cli, "CAPABILITIES", cli.CAPABILITIES[:-1])
    with pytest.raises(AssertionError):
        test_every_capability_with_commands_is_in_the_tuple()


def test_a_name_defined_twice_is_refused() -> None:
    one = Command("one", lambda p: None, lambda a: 0)
    twice = ModuleType("twice")
    vars(twice)["COMMANDS"] = {"list": one}
    with pytest.raises(ValueError, match="'list'"):
        cli.commands(capabilities=(*cli.CAPABILITIES, twice))
