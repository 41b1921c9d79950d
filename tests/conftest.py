"""Shared fixtures, and the order the tests run in.

Keep collection cheap, every xdist worker pays it: a test module loads nothing at import. A
test takes the records from the `tips` fixture (validated once per process; `load_tips` hands
every later caller the same tips until a file of tips/ changes), the site from `built_site`
(built once per run); a module that needs the records to make its cases does it in
``pytest_generate_tests`` (tests/records/test_snippets.py). A new module whose tests take
seconds each belongs in `RUN_FIRST`.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator import paths
from generator.records.schema import Tip

#: Where the tests that take seconds each live (a pre-commit install, torchrun jobs, training
#: runs, every snippet, the browser), in the order they run: before the many tests that take
#: milliseconds, so that under pytest-xdist the quick ones fill the end of the run and no
#: worker idles while another finishes one slow test. The site's tests come after the others
#: in this list: the worker that meets built_site first builds it while the other works on.
RUN_FIRST = (
    "tests/test_precommit.py",
    "tests/test_packaging.py",
    "tests/records/test_launch.py",
    "tests/compose/",
    "tests/records/test_snippets.py",
    "tests/site/",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the slow tests first (`RUN_FIRST`), each kept in its collected order."""

    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((i for i, p in enumerate(RUN_FIRST) if path.startswith(p)), len(RUN_FIRST))

    items.sort(key=rank)


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


def _build_site(out: Path) -> str | None:
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


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built with `mkdocs build --strict` into a temporary folder, once per test run:
    under pytest-xdist the first worker that needs it builds it while the others wait on a file
    lock in the run's shared temporary folder (the pattern pytest-xdist documents for session
    fixtures, as tests/installs.py makes its environments), then all read the same folder.
    Tests only read it."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out, done, failed = shared / "site", shared / "site.done", shared / "site.failed"
    with open(shared / "site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists() and not failed.exists():
            failure = _build_site(out)
            (failed if failure else done).write_text(failure or "", encoding="utf-8")
    assert not failed.exists(), failed.read_text(encoding="utf-8")  # built once, failed once
    return out
