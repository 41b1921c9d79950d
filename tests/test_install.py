"""Reproducible installs: constraints.txt pins what pyproject.toml asks for, tasks.py installs
from it and reinstalls when either file changes, and CI's environment is the locked one."""

from __future__ import annotations

import sys
import sysconfig
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import tasks
from generator import paths

LOCK = paths.ROOT / "constraints.txt"


def _locked() -> dict[str, Version]:
    pins = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = Version(version)
    return pins


def _requirements() -> list[Requirement]:
    """Every requirement of pyproject.toml: the base, each extra's, the build backend's."""
    pyproject = tomllib.loads((paths.ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    raw = [*project["dependencies"], *pyproject["build-system"]["requires"]]
    for extra in project["optional-dependencies"].values():
        raw += extra
    reqs = [Requirement(r) for r in raw]
    return [r for r in reqs if canonicalize_name(r.name) != canonicalize_name(project["name"])]


def test_the_lock_pins_every_requirement_within_its_range() -> None:
    pins = _locked()
    for req in _requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not in {LOCK.name}: run `python3 tasks.py lock`"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"{LOCK.name} pins {req.name}=={pins[name]}, outside {req}: run `python3 tasks.py lock`"
        )


def test_ci_runs_the_locked_versions() -> None:
    """In the environment tasks.py made (CI's), every installed package the lock names has
    the locked version (a local label such as +cpu aside)."""
    if Path(sys.prefix).resolve() != (paths.ROOT / ".venv").resolve():
        pytest.skip("not the .venv that tasks.py installs from the lock")
    pins = _locked()
    wrong = {}
    # The environment's own site-packages: not sys.path, which an `import setuptools` extends
    # with the packages it vendors (setuptools/_vendor holds an older platformdirs).
    site = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    for dist in metadata.distributions(path=sorted(site)):
        name = canonicalize_name(dist.metadata["Name"])
        if name in pins and Version(Version(dist.version).public) != pins[name]:
            wrong[name] = f"{dist.version} installed, {pins[name]} locked"
    assert not wrong, wrong


def test_tasks_install_from_the_lock_and_again_when_it_or_pyproject_changes(
    tmp_path: Path,
) -> None:
    assert tasks.LOCK == LOCK
    assert tasks.pip_env()["PIP_CONSTRAINT"] == str(LOCK)
    for name in ("pyproject.toml", "constraints.txt"):
        (tmp_path / name).write_bytes((paths.ROOT / name).read_bytes())
    before = tasks.install_stamp(tmp_path)
    assert before == tasks.install_stamp(paths.ROOT)
    for name in ("pyproject.toml", "constraints.txt"):
        path = tmp_path / name
        kept = path.read_bytes()
        path.write_bytes(kept + b"\n")
        assert tasks.install_stamp(tmp_path) != before, name
        path.write_bytes(kept)
    assert tasks.install_stamp(tmp_path) == before


def test_lock_keeps_exact_pins_without_local_labels() -> None:
    freeze = "# comment\nTorch==2.13.0+cpu\njieba==0.42.1\n\naiohttp==3.14.5\n"
    assert tasks.pinned(freeze) == ["aiohttp==3.14.5", "jieba==0.42.1", "Torch==2.13.0"]
    with pytest.raises(ValueError, match="pins no version"):
        tasks.pinned("jieba==0.42.1\npytorch-tips @ file:///src\n")
