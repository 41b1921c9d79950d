"""Shared fixtures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator import paths
from generator.records.schema import Tip


@pytest.fixture(scope="session")
def tips() -> list[Tip]:
    """Every tip record of tips/, validated once per test process (read-only: the tips are
    frozen, and `load_tips` hands the same ones to every caller until a file changes)."""
    from generator.records.load import load_tips

    return load_tips()


@pytest.fixture(scope="session")
def tip_ids(tips: list[Tip]) -> frozenset[str]:
    """The ids of every tip."""
    return frozenset(str(t.id) for t in tips)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built with `mkdocs build --strict` into a temporary folder (once per worker)."""
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out
