"""Shared fixtures, and the order the tests run in.

Keep collection cheap, every xdist worker pays it: a test module loads nothing at import. A
test takes the records from the `tips` fixture (validated once per process; `load_tips` hands
every later caller the same tips until a file of tips/ changes), the site from `built_site`
(built once per run); a module that needs the records to make its cases does it in
``pytest_generate_tests`` (tests/records/test_snippets.py). A new module whose tests take
seconds each belongs in `RUN_FIRST`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from pathlib import Path

import pytest

from generator.records.schema import Tip
from tests.helpers import build_site

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


def _site_paths(base: Path) -> tuple[Path, Path, Path, Path]:
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return shared / "site", shared / "site.done", shared / "site.failed", shared / "site.lock"


def _ensure_site(base: Path) -> Path:
    """Build the site once per run (under the shared lock) unless it is built or failed."""
    out, done, failed, lock_path = _site_paths(base)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists() and not failed.exists():
            failure = build_site(out)
            (failed if failure else done).write_text(failure or "", encoding="utf-8")
    assert not failed.exists(), failed.read_text(encoding="utf-8")  # built once, failed once
    return out


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Start building the site at once, in a thread of the first worker, when a collected test
    needs it: it is built while the slow tests run, and no worker waits for it later."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    if worker != "gw0" or not any(
        "built_site" in getattr(item, "fixturenames", ()) for item in session.items
    ):
        return
    base = session.config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    threading.Thread(target=_ensure_site_quietly, args=(base,), daemon=True).start()


def _ensure_site_quietly(base: Path) -> None:
    with contextlib.suppress(BaseException):  # the fixture reports a failed build
        _ensure_site(base)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built with `mkdocs build --strict` into a temporary folder, once per test run:
    the first worker starts the build when collection ends (`pytest_collection_finish`), and
    a worker that needs the site waits on a file lock in the run's shared temporary folder
    (the pattern pytest-xdist documents for session fixtures, as tests/installs.py makes its
    environments), then all read the same folder. Tests only read it."""
    return _ensure_site(tmp_path_factory.getbasetemp())
