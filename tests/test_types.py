"""The package type-checks: mypy, with the settings of pyproject.toml (``[tool.mypy]``: every
``# type: ignore`` names its error code and must still be needed), reports nothing in
generator/. A planted file shows that the check fails on a wrong attribute of the typed
composer options and on an ignore that is no longer needed.

mypy runs in this process (`mypy.api`), with its cache under pytest's cache folder, so a run
after a small change re-checks only what changed (under a second; 6-10 s cold on the shared
2-core machine, with torch's own types skipped: see ``[tool.mypy]``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mypy import api

from generator import paths

#: One error of mypy's output: ``file:line: error: message  [code]``.
_ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+): error: .*\[(?P<code>[a-z-]+)\]$", re.M)

pytestmark = pytest.mark.xdist_group("mypy")  # one cache, one writer


@pytest.fixture(scope="module")
def cache_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    return cache.mkdir("mypy") if cache is not None else tmp_path_factory.mktemp("mypy")


def _mypy(cache_dir: Path, *targets: str) -> tuple[int, str]:
    config = str(paths.ROOT / "pyproject.toml")
    out, err, status = api.run(["--config-file", config, "--cache-dir", str(cache_dir), *targets])
    return status, out + err


def test_the_package_type_checks(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(paths.ROOT)
    status, out = _mypy(cache_dir, "generator")
    errors = [m.group(0) for m in _ERROR.finditer(out)]
    assert errors == [], "\n".join(errors)
    assert status in (0, 1) and "Traceback" not in out, out  # 2: mypy could not run


def test_a_planted_error_fails_the_check(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from generator.compose.options import ComposeOptions\n"
        "\n"
        "def steps(options: ComposeOptions) -> int:\n"
        "    return options.acum  # misspelt: the options' fields are typed\n"
        "\n"
        "count: int = 1  # type: ignore[assignment]\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MYPYPATH", str(paths.ROOT))
    status, out = _mypy(cache_dir, planted.name)
    found = {(int(m["line"]), m["code"]) for m in _ERROR.finditer(out)}
    assert status == 1 and found == {(4, "attr-defined"), (6, "unused-ignore")}, out
