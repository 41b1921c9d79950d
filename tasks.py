#!/usr/bin/env python3
"""The project's entry points, needing only Python 3.11+ and git.

    python3 tasks.py serve   # set up, build the site and serve it on http://127.0.0.1:8000
    python3 tasks.py test    # set up and run the whole test suite
    python3 tasks.py lock    # re-resolve the dependencies and rewrite constraints.txt

`serve` and `test` create (or reuse) a virtual environment in .venv and install the project
into it with every extra, at the versions constraints.txt records (the set CI tested); a
second run skips the install unless pyproject.toml or constraints.txt changed.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
#: The exact versions CI tested: pip constraints, written by `python3 tasks.py lock` only.
LOCK = ROOT / "constraints.txt"
#: What `serve` and `test` install: `dev` brings the `run` and `site` extras along.
TARGET = ".[dev]"


def _say(msg: str) -> None:
    print(f"==> {msg}", flush=True)


def _check_python() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - this file runs before the venv exists
        sys.exit(f"Python 3.11 or newer is needed, this is {sys.version.split()[0]}")


def install_stamp(root: Path = ROOT) -> str:
    """A digest of what the install depends on: pyproject.toml and the lock."""
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "constraints.txt"):
        path = root / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.exists() else b""))
    return digest.hexdigest()[:16]


def pip_env(lock: Path = LOCK) -> dict[str, str]:
    """The environment of every pip call that installs: the lock as constraints. Through the
    environment, not `-c`, so the isolated builds (hatchling, jieba's sdist) get it too."""
    return dict(os.environ, PIP_CONSTRAINT=str(lock))


def ensure_env() -> None:
    """Create .venv and install the project with its extras from the lock, once per
    `install_stamp`."""
    _check_python()
    if not LOCK.exists():
        sys.exit(f"{LOCK.name} is missing: run `python3 tasks.py lock` to write it")
    stamp = VENV / f".installed-{install_stamp()}"
    if stamp.exists() and PYTHON.exists():
        return
    if not PYTHON.exists():
        _say(f"creating virtual environment in {VENV}")
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    _say(f"installing the project and its tools from {LOCK.name} (torch, mkdocs, pytest, ...)")
    subprocess.run(
        [str(PYTHON), "-m", "pip", "install", "--quiet", "-e", TARGET],
        check=True,
        cwd=ROOT,
        env=pip_env(),
    )
    for old in VENV.glob(".installed-*"):
        old.unlink()
    stamp.touch()


def pinned(freeze: str) -> list[str]:
    """The ``name==version`` lines of ``pip freeze`` output, sorted, without local version
    labels: ``torch==2.13.0+cpu`` becomes ``torch==2.13.0``, which the local CPU wheel still
    satisfies here and a CUDA build does on a GPU machine.

    Raises:
        ValueError: a line pins no version (an editable or direct-URL install).
    """
    lines = []
    for raw in freeze.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^+\s;]+)(\+\S+)?", line)
        if match is None:
            raise ValueError(f"pip freeze gave a line that pins no version: {line!r}")
        lines.append(f"{match[1]}=={match[2]}")
    return sorted(lines, key=str.lower)


def lock() -> int:
    """Resolve the project with every extra, and its build backend, in a fresh venv, and
    write the versions pip chose to constraints.txt."""
    import tomllib

    _check_python()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = ",".join(sorted(pyproject["project"]["optional-dependencies"]))
    backend = pyproject["build-system"]["requires"]
    env = {k: v for k, v in os.environ.items() if k != "PIP_CONSTRAINT"}
    with tempfile.TemporaryDirectory(prefix="pytorch-tips-lock-") as tmp:
        env_dir = Path(tmp) / "venv"
        _say(f"resolving .[{extras}] and {', '.join(backend)} in a fresh environment")
        venv.EnvBuilder(with_pip=True).create(env_dir)
        python = env_dir / ("Scripts" if os.name == "nt" else "bin") / "python"
        pip = [str(python), "-m", "pip"]
        subprocess.run(
            [*pip, "install", "--quiet", f"{ROOT}[{extras}]", *backend], check=True, env=env
        )
        freeze = subprocess.run(
            [*pip, "freeze", "--exclude", "pytorch-tips"],
            check=True,
            env=env,
            capture_output=True,
            text=True,
        ).stdout
    lines = pinned(freeze)
    header = (
        "# The exact versions CI tested: pip constraints for every extra and the build backend.\n"
        "# Written by `python3 tasks.py lock` (do not edit by hand), which resolves the project\n"
        "# afresh; tasks.py installs with PIP_CONSTRAINT pointing here.\n"
        f"# Resolved on Python {platform.python_version()} ({sys.platform}).\n"
    )
    LOCK.write_text(header + "".join(f"{line}\n" for line in lines), encoding="utf-8")
    _say(f"wrote {LOCK.name}: {len(lines)} packages")
    return 0


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
    tasks = {"serve": serve, "test": test, "lock": lock}
    if len(sys.argv) < 2 or sys.argv[1] not in tasks:
        print(__doc__.strip())
        return 2
    try:
        return tasks[sys.argv[1]]()
    except subprocess.CalledProcessError as err:
        print(f"error: {' '.join(map(str, err.cmd))} failed with exit status {err.returncode}")
        return err.returncode or 1
    except ValueError as err:
        print(f"error: {err}")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
