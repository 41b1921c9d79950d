"""Shared helpers for the tests."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import yaml

from generator import paths

EXAMPLE = paths.TIPS / "zero-grad-set-to-none.yaml"


def example_record() -> dict:
    """A deep copy of a known-good record, to mutate into bad ones."""
    data = copy.deepcopy(yaml.safe_load(EXAMPLE.read_text(encoding="utf-8")))
    data.pop("lint", None)  # its lint rules name the original tip, not the copy
    return data


class _BlockDumper(yaml.SafeDumper):
    """Dump multi-line strings as `|` block scalars, the way records are written by hand."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def write_record(folder: Path, name: str, data: dict) -> Path:
    path = folder / name
    text = yaml.dump(data, Dumper=_BlockDumper, allow_unicode=True, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m generator ARGS`` in a subprocess, the way a user does."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        capture_output=True,
        text=True,
        cwd=cwd or paths.ROOT,
        env=env,
        timeout=120,
    )


def build_site(out: Path) -> str | None:
    """Build the site into ``out`` with `mkdocs build --strict`; None, or why it failed."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    return None if proc.returncode == 0 else f"mkdocs build failed:\n{proc.stdout}{proc.stderr}"
