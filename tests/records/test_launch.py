"""The torchrun path of the harness: a snippet with `launch` is the script of every rank.

Each case is one real 2-rank torchrun job on CPU with gloo (~12 CPU-s), so there are few: the
converted distributed tips exercise the passing paths (success, an expected error, a hang);
these cases make sure a failing rank, a check failing in one rank only, a warning in a rank and
a job that does not end as expected all fail the run, and say which rank.
"""

from __future__ import annotations

import importlib.util

import pytest

from generator.records.harness import run_variant
from generator.records.schema import Launch

#: The jobs need torch (and torchrun), in the child processes only: not imported here.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed"
)

#: A 2-rank job: rank 1 may misbehave, as the test asks.
SCRIPT = """
import warnings

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
total = torch.full((3,), float(rank + 1))
dist.all_reduce(total)  # 1 + 2 on both ranks
if rank == 1:
    {rank1}
with open(f"rank{{rank}}.txt", "w") as f:
    f.write(str(total.tolist()))
dist.destroy_process_group()
"""

#: Checks run in every rank after the script, with the group still up.
CHECKS = """
seen = [None] * dist.get_world_size()
dist.all_gather_object(seen, total.tolist())
assert seen == [[3.0] * 3] * 2, seen
assert {rank_condition}, f"rank {{rank}}: a check that fails here"
"""

#: Checks after the job: the files the ranks wrote, in the job's working directory.
AFTER_JOB = """
assert exit_code == 0, exit_code
assert sorted(p.name for p in workdir.glob("rank*.txt")) == ["rank0.txt", "rank1.txt"]
print("after the job:", (workdir / "rank1.txt").read_text())
"""


def _run(rank1: str = "pass", rank_condition: str = "True", launch: Launch | None = None):
    return run_variant(
        SCRIPT.format(rank1=rank1),
        CHECKS.format(rank_condition=rank_condition),
        "snippets/demo/after.py",
        launch=launch or Launch(nproc=2, checks=AFTER_JOB),
    )


def test_a_job_whose_ranks_and_checks_pass_passes() -> None:
    result = _run()
    assert result.ok, result.output
    assert "after the job: [3.0, 3.0, 3.0]" in result.output
    assert "--- rank 0 (ok) ---" in result.output and "--- rank 1 (ok) ---" in result.output


def test_a_rank_that_raises_fails_the_run_and_is_named() -> None:
    result = _run(rank1="raise ValueError('rank 1 broke')")
    assert not result.ok
    assert "rank 1 (snippet-failed)" in result.output
    assert "ValueError: rank 1 broke" in result.output
    assert (
        'File "' in result.output and 'after.py", line' in result.output
    )  # named like the snippet


def test_a_check_failing_in_rank_1_only_fails_the_run() -> None:
    result = _run(rank_condition="rank == 0")
    assert not result.ok
    assert "the checks failed in rank 1" in result.output
    assert "rank 1: a check that fails here" in result.output
    assert "after the job:" not in result.output  # the checks after the job did not run


@pytest.mark.parametrize("category", ["DeprecationWarning", "FutureWarning"])
def test_a_warning_in_a_rank_is_an_error(category: str) -> None:
    result = _run(rank1=f"warnings.warn('stale API', {category})")
    assert not result.ok
    assert "rank 1 (snippet-failed)" in result.output
    assert f"{category}: stale API" in result.output


def test_a_job_expected_to_hang_that_ends_fails() -> None:
    result = _run(launch=Launch(nproc=2, expect="hang", hang_s=5))
    assert not result.ok
    assert "expected to hang" in result.output
