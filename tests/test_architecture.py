"""The package's layers hold: no module imports from a layer above its own.

The contract is import-linter's, in pyproject.toml (`[tool.importlinter]`); this runs it, and
runs the same kind of contract on a small package with an upward import, to show the check
can fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from generator import paths


def _lint_imports(cwd: Path, config: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        f"sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True))"
    )
    env = dict(os.environ, PYTHONPATH=str(cwd))
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, env=env, timeout=60
    )


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    proc = _lint_imports(paths.ROOT, paths.ROOT / "pyproject.toml")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    """The same kind of contract on a two-layer package: kept as it is, broken (exit 1) once
    its bottom layer imports the top one, and by nothing else."""
    pkg = tmp_path / "app"
    for layer in ("cli", "records"):
        (pkg / layer).mkdir(parents=True)
        (pkg / layer / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "cli" / "__init__.py").write_text("from app import records\n", encoding="utf-8")
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    config = tmp_path / "pyproject.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "app"\n\n[[tool.importlinter.contracts]]\n'
        'name = "layers"\ntype = "layers"\nlayers = ["app.cli", "app.records"]\n',
        encoding="utf-8",
    )
    kept = _lint_imports(tmp_path, config)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    (pkg / "records" / "__init__.py").write_text("from app import cli\n", encoding="utf-8")
    broken = _lint_imports(tmp_path, config)
    assert broken.returncode == 1, broken.stdout + broken.stderr
