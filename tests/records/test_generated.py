"""Generated files: marked as generated, fresh, lint-clean, and `check` catches staleness."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from generator import paths
from generator.records.generated import stale_files, write_files
from generator.records.schema import Tip
from tests.helpers import run_cli


def test_committed_generated_files_are_fresh(tips: list[Tip]) -> None:
    stale = stale_files(tips)
    assert stale == [], "run `python -m generator snippets`: " + ", ".join(
        f"{p} ({why})" for p, why in stale
    )


def test_check_command_passes_on_the_repository() -> None:
    proc = run_cli("check")
    assert proc.returncode == 0, proc.stderr


def test_check_names_each_stale_file(
    tips: list[Tip], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(paths, "SNIPPETS", tmp_path / "snippets")
    monkeypatch.setattr(paths, "SCHEMA_JSON", tmp_path / "schema.json")
    managed = [paths.SNIPPETS]
    write_files(tips, managed=managed)
    assert stale_files(tips, managed=managed) == []
    edited = paths.SNIPPETS / "zero-grad-set-to-none" / "after.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "# hand edit\n", encoding="utf-8")
    orphan = paths.SNIPPETS / "deleted-tip" / "after.py"
    orphan.parent.mkdir()
    orphan.write_text("print('old')\n", encoding="utf-8")
    (tmp_path / "schema.json").unlink()
    found = dict(stale_files(tips, managed=managed))
    assert found == {
        edited: "out of date",
        orphan: "no record behind it",
        tmp_path / "schema.json": "missing",
    }
    write_files(tips, managed=managed)
    assert stale_files(tips, managed=managed) == []
    assert not orphan.exists()


def test_every_snippet_is_marked_generated_and_names_its_record() -> None:
    files = sorted(paths.SNIPPETS.rglob("*.py"))
    assert files, "no snippet files"
    for path in files:
        header = path.read_text(encoding="utf-8").splitlines()[:3]
        tip_id = path.parent.name
        assert f"Generated from tips/{tip_id}.yaml" in header[1], path
        assert "do not edit by hand" in header[1], path


def test_snippets_pass_ruff() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", str(paths.SNIPPETS)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_schema_json_forbids_unknown_keys_and_describes_every_field() -> None:
    schema = json.loads(paths.SCHEMA_JSON.read_text(encoding="utf-8"))
    models = {"Tip": schema, **schema["$defs"]}
    for name, model in models.items():
        if model.get("type") != "object":
            continue
        assert model.get("additionalProperties") is False, name
        for field, spec in model["properties"].items():
            assert spec.get("description"), f"{name}.{field} has no description"


STALE_APIS = ("torch.cuda.amp", "reset_max_memory_allocated", "torch.jit.script", "Variable(")


def _torch_load_calls(code: str) -> list[ast.Call]:
    calls = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func
            if target.attr == "load" and isinstance(target.value, ast.Name):
                if target.value.id == "torch":
                    calls.append(node)
    return calls


def test_no_snippet_uses_stale_apis_or_an_unsafe_torch_load(tips: list[Tip]) -> None:
    for tip in tips:
        for name, variant in tip.variants().items():
            if name == "after":
                for needle in STALE_APIS:
                    assert needle not in variant.code, f"{tip.id}: after code uses {needle}"
            for call in _torch_load_calls(variant.code):
                flags = {k.arg: k.value for k in call.keywords}
                value = flags.get("weights_only")
                assert isinstance(value, ast.Constant) and value.value is True, (
                    f"{tip.id} {name}: torch.load without weights_only=True on line {call.lineno}"
                )


def test_the_torch_load_detector_can_fail() -> None:
    assert len(_torch_load_calls("import torch\ntorch.load(f(x), map_location='cpu')\n")) == 1
