"""The script runner the composer's tests share (one server for the session)."""

from __future__ import annotations

import pytest

from tests.compose.compose_cases import ScriptRunner


@pytest.fixture(scope="session")
def runner():
    runner = ScriptRunner()
    yield runner
    runner.close()
