"""The pre-commit hook of .pre-commit-hooks.yaml, run for real by pre-commit.

A scratch git repository's ``.pre-commit-config.yaml`` names this repository's hook, as a
user's does, and ``pre-commit run`` installs it (a fresh virtualenv, ``pip install .`` of the
hook repository: the base package only) and runs it on a bad file and a clean one. The hook
repository is a committed snapshot of this checkout's working tree, so uncommitted changes are
tried too. (``pre-commit try-repo`` does the same but installs the hook into a throwaway store
on every call: two installs instead of one, about 25 s each here.)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from generator import paths
from tests import installs

BAD_LOAD = 'import torch\nstate = torch.load("ckpt.pt")\n'
CLEAN_LOAD = 'import torch\nstate = torch.load("ckpt.pt", weights_only=True)\n'
GIT_ID = ["-c", "user.name=test", "-c", "user.email=test@example.invalid"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True)


def _snapshot(dest: Path) -> Path:
    """The checkout's working tree (tracked and untracked files, not ignored ones), committed."""
    files = (
        subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=paths.ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        source = paths.ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "snapshot")
    return dest


def test_the_hook_reports_a_finding_and_passes_a_clean_file(tmp_path: Path) -> None:
    hook_repo = _snapshot(tmp_path / "hook-repo")
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hook_repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    work = tmp_path / "work"
    work.mkdir()
    (work / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo}\n    rev: {rev}\n    hooks:\n"
        "      - id: pytorch-tips-lint\n",
        encoding="utf-8",
    )
    (work / "train.py").write_text(BAD_LOAD, encoding="utf-8")
    (work / "clean.py").write_text(CLEAN_LOAD, encoding="utf-8")
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    home = tmp_path / "pre-commit-home"
    env = installs.pip_env() | {"PRE_COMMIT_HOME": str(home)}

    def run(*files: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--files", *files],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    found = run("train.py")
    assert found.returncode == 1, found.stdout + found.stderr
    assert "pytorch-tips lint" in found.stdout and "Failed" in found.stdout
    assert "train.py:2:9: PTT011" in found.stdout, found.stdout
    clean = run("clean.py")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "pytorch-tips lint" in clean.stdout and "Passed" in clean.stdout
    # one hook environment, holding the base package and the records, not torch or MkDocs
    (site,) = home.glob("repo*/py_env-*/lib/python*/site-packages")
    assert (site / "generator" / "_tips" / "_glossary.yaml").is_file()
    assert not (site / "torch").exists() and not (site / "mkdocs").exists()
