"""The package as users install it.

* The wheel carries every subpackage, the templates and the tip records. It is built by the
  PEP 517 hook that ``pip wheel .`` and ``python -m build`` call, from this venv's hatchling
  (the locked version), which spares an isolated build environment per run.
* Installed in a fresh venv, outside the checkout, with the base dependencies only, it has no
  torch, MkDocs or numpy, and ``pytorch-tips`` validates, searches, shows, composes and lints
  there; the commands that need more say in one line what to install.
* An editable install reads ``tips/`` of the checkout, where contributors edit it.

The wheel and the venvs are made once per run (`tests.installs`).
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

import generator
from generator import paths
from generator.records.load import load_tips
from tests import installs

#: One worker runs every test here (pytest -n auto --dist loadgroup): the wheel and the venvs
#: are made once per run under a file lock, and no other worker sits waiting on it.
pytestmark = pytest.mark.xdist_group("installs")

BAD_LOAD = 'import torch\nstate = torch.load("ckpt.pt")\n'
CLEAN_LOAD = 'import torch\nstate = torch.load("ckpt.pt", weights_only=True)\n'


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installs.build_wheel(tmp_path_factory)


@pytest.fixture(scope="session")
def wheel_env(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    return installs.make_env(tmp_path_factory, "wheel", str(wheel))


@pytest.fixture(scope="session")
def editable_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installs.build_wheel(tmp_path_factory, editable=True)


@pytest.fixture(scope="session")
def editable_env(tmp_path_factory: pytest.TempPathFactory, editable_wheel: Path) -> Path:
    # paths needs nothing beyond the standard library: the package alone shows where it reads
    return installs.make_env(tmp_path_factory, "editable", "--no-deps", str(editable_wheel))


def _tips(env: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``pytorch-tips ARGS`` of ``env``, run from ``cwd``."""
    return subprocess.run(
        [str(installs.bin_dir(env) / "pytorch-tips"), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        env=installs.clean_env(PYTHONIOENCODING="utf-8"),
    )


def _tracked(folder: str) -> set[str]:
    """The files of ``folder`` that git tracks or would (untracked, not ignored)."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", folder],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line for line in out.splitlines() if (paths.ROOT / line).is_file()}


def test_the_wheel_carries_every_module_template_and_record(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    package = _tracked("generator")
    assert package and package <= names, sorted(package - names)
    records = {f"generator/_tips/{Path(p).name}" for p in _tracked("tips")}
    assert "generator/_tips/_glossary.yaml" in records
    assert records <= names, sorted(records - names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    # nothing else from the checkout: no tests, docs, snippets or benchmarks
    dist_info = f"pytorch_tips-{generator.__version__}.dist-info"
    assert {n.split("/")[0] for n in names} == {"generator", dist_info}


def test_the_base_install_has_no_torch_mkdocs_or_numpy(wheel_env: Path) -> None:
    heavy = ("torch", "numpy", "mkdocs", "material", "pagefind", "tqdm", "lightning")
    code = f"import importlib.util as u; print([m for m in {heavy!r} if u.find_spec(m)])"
    proc = subprocess.run(
        [str(installs.bin_dir(wheel_env) / "python"), "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=installs.clean_env(),
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_validate_in_the_installed_package(wheel_env: Path, tmp_path: Path) -> None:
    ok = _tips(wheel_env, "validate", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == f"{len(load_tips())} record(s) valid."
    bad = tmp_path / "my-tip.yaml"
    text = (paths.TIPS / "zero-grad-set-to-none.yaml").read_text(encoding="utf-8")
    bad.write_text(text.replace("category: training-loop", "category: no-such-category"))
    assert "no-such-category" in bad.read_text()
    found = _tips(wheel_env, "validate", str(bad), cwd=tmp_path)
    assert found.returncode == 1, found.stdout + found.stderr
    assert "my-tip.yaml:" in found.stderr and "category" in found.stderr
    assert "Traceback" not in found.stderr


def test_search_and_show_in_the_installed_package(wheel_env: Path, tmp_path: Path) -> None:
    english = _tips(wheel_env, "search", "out of memory", "--limit", "3", cwd=tmp_path)
    assert english.returncode == 0 and "find-max-batch-size" in english.stdout, english.stderr
    shown = _tips(wheel_env, "show", "zero-grad-set-to-none", "--lang", "zh", cwd=tmp_path)
    assert shown.returncode == 0 and "[zero-grad-set-to-none]" in shown.stdout, shown.stderr


def test_compose_and_lint_in_the_installed_package(wheel_env: Path, tmp_path: Path) -> None:
    composed = _tips(wheel_env, "compose", "--amp", "--accum", "4", "-o", "train.py", cwd=tmp_path)
    assert composed.returncode == 0, composed.stderr
    script = (tmp_path / "train.py").read_text(encoding="utf-8")
    compile(script, "train.py", "exec")
    assert "# tip: gradient-accumulation" in script
    (tmp_path / "bad.py").write_text(BAD_LOAD, encoding="utf-8")
    (tmp_path / "clean.py").write_text(CLEAN_LOAD, encoding="utf-8")
    found = _tips(wheel_env, "lint", "bad.py", cwd=tmp_path)
    assert found.returncode == 1, found.stdout + found.stderr
    assert "bad.py:2:9: PTT011" in found.stdout
    clean = _tips(wheel_env, "lint", "clean.py", "train.py", cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "No findings in 2 files." in clean.stdout


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["run", "zero-grad-set-to-none"],
            "needs the [run] extra (torch is not installed): pip install 'pytorch-tips[run]'",
        ),
        (["build"], "works in a checkout of the repository"),
        (["bench", "--quick"], "works in a checkout of the repository"),
        (["snippets"], "works in a checkout of the repository"),
        (["new", "my-tip"], "works in a checkout of the repository"),
    ],
    ids=lambda v: v[0] if isinstance(v, list) else "",
)
def test_commands_that_need_more_say_what_in_one_line(
    wheel_env: Path, tmp_path: Path, argv: list[str], says: str
) -> None:
    proc = _tips(wheel_env, *argv, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: pytorch-tips {argv[0]} ") and says in line, line
    assert not list(tmp_path.iterdir())  # nothing written


def test_an_editable_install_reads_the_records_of_the_checkout(
    editable_wheel: Path, editable_env: Path, tmp_path: Path
) -> None:
    # a .pth to the checkout, and no copy of the records that could go stale
    names = zipfile.ZipFile(editable_wheel).namelist()
    assert [n for n in names if not n.startswith("pytorch_tips-")] == [
        "_editable_impl_pytorch_tips.pth"
    ]
    code = "import generator; from generator import paths; print(generator.__file__, paths.TIPS)"
    proc = subprocess.run(
        [str(installs.bin_dir(editable_env) / "python"), "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        env=installs.clean_env(),
    )
    package, tips = proc.stdout.split()
    assert Path(package) == paths.ROOT / "generator" / "__init__.py", proc.stdout + proc.stderr
    assert Path(tips) == paths.ROOT / "tips"
