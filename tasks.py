#!/usr/bin/env python3
"""The project's two entry points, needing only Python 3.11+ and git.

    python3 tasks.py serve   # set up, build the site and serve it on http://127.0.0.1:8000
    python3 tasks.py test    # set up and run the whole test suite

Both create (or reuse) a virtual environment in .venv and install the project into it;
a second run skips the install unless pyproject.toml changed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")


def _say(msg: str) -> None:
    print(f"==> {msg}", flush=True)


def ensure_env() -> None:
    """Create .venv and install the project with its dev extras, once per pyproject.toml."""
    if sys.version_info < (3, 11):  # noqa: UP036 - this file runs before the venv exists
        sys.exit(f"Python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    stamp = VENV / f".installed-{digest}"
    if stamp.exists() and PYTHON.exists():
        return
    if not PYTHON.exists():
        _say(f"creating virtual environment in {VENV}")
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    _say("installing the project and its tools (torch==2.13.0, mkdocs, pytest, ...)")
    subprocess.run(
        [str(PYTHON), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[dev]"],
        check=True,
        cwd=ROOT,
    )
    for old in VENV.glob(".installed-*"):
        old.unlink()
    stamp.touch()


def run(*args: str) -> int:
    return subprocess.run([str(PYTHON), *args], cwd=ROOT).returncode


def serve() -> int:
    ensure_env()
    _say("building the site from tips/ and serving it")
    return run("-m", "generator", "serve", *sys.argv[2:])


def test() -> int:
    ensure_env()
    _say("running the test suite")
    return run("-m", "pytest", "-n", "auto", *sys.argv[2:])


def main() -> int:
    tasks = {"serve": serve, "test": test}
    if len(sys.argv) < 2 or sys.argv[1] not in tasks:
        print(__doc__.strip())
        return 2
    try:
        return tasks[sys.argv[1]]()
    except subprocess.CalledProcessError as err:
        print(f"error: {' '.join(map(str, err.cmd))} failed with exit status {err.returncode}")
        return err.returncode or 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
