"""The suite reruns a failure once only when it is gloo's teardown abort, never any other.

``pyproject.toml`` configures pytest-rerunfailures with ``reruns = 1`` and an ``only_rerun``
pattern. These tests run a small suite under exactly that configuration: a test that fails
once with the abort line passes on its rerun, while a test that fails with any other message
fails at once and is not run again, and a test that keeps aborting still fails. The summary
lists the reruns and the skips with their reasons.
"""

from __future__ import annotations

import tomllib

import pytest

from generator import paths

pytest_plugins = ["pytester"]

ABORT = "terminate called without an active exception"


def _our_settings() -> dict:
    with open(paths.ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["pytest"]["ini_options"]


def test_only_the_gloo_abort_is_rerun() -> None:
    settings = _our_settings()
    assert settings["reruns"] == "1"
    assert settings["only_rerun"] == [ABORT]


def test_the_configuration_reruns_the_abort_and_nothing_else(pytester: pytest.Pytester) -> None:
    settings = _our_settings()
    pytester.makeini(
        "[pytest]\n"
        f"addopts = {settings['addopts']}\n"
        f"reruns = {settings['reruns']}\n"
        "only_rerun =\n" + "".join(f"    {p}\n" for p in settings["only_rerun"])
    )
    pytester.makepyfile(
        f"""
        from pathlib import Path

        ABORT = {ABORT!r}

        def _first_time(name):
            flag = Path(name)
            first = not flag.exists()
            flag.touch()
            return first

        def test_aborts_once():
            # Like a torchrun launch whose rank 0 died in teardown, then a clean launch.
            assert not _first_time("aborted"), "rank 0 exited with -6:\\n" + ABORT

        def test_always_aborts():
            assert False, ABORT

        def test_needs_a_gpu():
            import pytest
            pytest.skip("no CUDA GPU here")

        def test_wrong_result_once():
            assert not _first_time("wrong"), "max_err 0.3 >= 1e-5"
        """
    )
    result = pytester.runpytest("-p", "rerunfailures", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2, skipped=1)
    assert result.parseoutcomes().get("rerun") == 2  # one for each test that aborted
    # test_wrong_result_once would pass if run twice: its failure shows it ran once.
    result.stdout.fnmatch_lines(
        ["FAILED *::test_always_aborts*", "FAILED *::test_wrong_result_once*"]
    )
    # Our addopts list every rerun and every skip with its reason in the summary.
    result.stdout.fnmatch_lines(["RERUN *::test_aborts_once", "RERUN *::test_always_aborts"])
    result.stdout.fnmatch_lines(["SKIPPED * no CUDA GPU here"])
