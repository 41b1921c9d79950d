"""The script runner the composer's tests share (one server for the session), and the
one-process GPT steps the equivalence tests compare with."""

from __future__ import annotations

import pytest

from tests.compose.compose_cases import ScriptRunner
from tests.compose.gpt_cases import one_step


@pytest.fixture(scope="session")
def runner():
    runner = ScriptRunner()
    yield runner
    runner.close()


@pytest.fixture(scope="session")
def refs(tmp_path_factory, runner):
    """One process, one micro-batch: global batches of 6 and 8, and 6 clipped to norm 0.05."""
    base = tmp_path_factory.mktemp("gpt-refs")
    return {
        "6": one_step(runner, base / "b6", [], ["--batch-size", "6"]),
        "8": one_step(runner, base / "b8", [], ["--batch-size", "8"]),
        "6-clip": one_step(
            runner, base / "clip", [], ["--batch-size", "6", "--clip-grad-norm", "0.05"]
        ),
    }
