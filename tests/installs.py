"""Fresh virtual environments for the install tests, shared by every test of one run.

Each is made once per run (pytest-xdist workers wait for each other on a file lock under the
run's temporary folder) and pip installs with the lock's versions (constraints.txt) from its
cache, so a second environment costs seconds.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from generator import paths

LOCK = paths.ROOT / "constraints.txt"


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would lead another Python to the checkout or
    to this venv (PYTHONPATH, VIRTUAL_ENV), plus ``extra``."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}
    return {k: v for k, v in os.environ.items() if k not in drop} | extra


def pip_env() -> dict[str, str]:
    """The environment of a pip install from the lock (as tasks.py installs)."""
    return clean_env(PIP_CONSTRAINT=str(LOCK), PIP_DISABLE_PIP_VERSION_CHECK="1")


def shared_dir(factory: pytest.TempPathFactory) -> Path:
    """A folder every xdist worker of this run sees (the parent of the workers' temp dirs)."""
    base = factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / "installs"
    folder.mkdir(exist_ok=True)
    return folder


def _pip(python: Path, *args: str) -> None:
    # The running interpreter's pip installs into the new environment (`--python`): no
    # ensurepip per environment.
    cmd = [sys.executable, "-m", "pip", "--python", str(python), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=pip_env(), timeout=600)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"


def bin_dir(env: Path) -> Path:
    return env / "bin"


def make_env(factory: pytest.TempPathFactory, name: str, *install: str) -> Path:
    """The environment ``name`` with ``pip install INSTALL...`` done in it, made once per run."""
    folder = shared_dir(factory)
    env = folder / name
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (env / "ready").exists():
            venv.EnvBuilder(with_pip=False, clear=True).create(env)
            _pip(bin_dir(env) / "python", "install", "--quiet", *install)
            (env / "ready").touch()
    return env


def build_wheel(factory: pytest.TempPathFactory, editable: bool = False) -> Path:
    """The checkout built by its PEP 517 backend (as ``pip wheel .`` or ``pip install -e .``
    would), once per run. The backend comes from this venv (dev extra, locked version), so
    there is no isolated build environment to set up."""
    kind = "editable" if editable else "wheel"
    folder = shared_dir(factory)
    dist = folder / f"dist-{kind}"
    with open(folder / f"dist-{kind}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not list(dist.glob("*.whl")):
            dist.mkdir(exist_ok=True)
            hook = "build_editable" if editable else "build_wheel"
            code = f"import sys, hatchling.build as b; b.{hook}(sys.argv[1])"
            proc = subprocess.run(
                [sys.executable, "-c", code, str(dist)],
                cwd=paths.ROOT,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = dist.glob("*.whl")
    return wheel
