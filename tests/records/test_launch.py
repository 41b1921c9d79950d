"""The torchrun path of the harness: a snippet with `launch` is the script of every rank.

Each case is one real 2-rank torchrun job on CPU with gloo (~12 CPU-s), so there are few: the
converted distributed tips exercise the passing paths (success, an expected error, a hang);
these cases make sure a failing rank, a check failing in one rank only, a warning in a rank and
a job that does not end as expected all fail the run, and say which rank.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

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


#: Every rank prints the variables a launcher gives it, and whether it leads its own session.
ENV_SCRIPT = """
import json, os

import torch.distributed as dist

dist.init_process_group("gloo")
names = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_", "ROLE_", "MASTER_",
         "TORCHELASTIC_", "TORCH_NCCL_", "OMP_NUM_THREADS")
env = {k: v for k, v in os.environ.items() if k.startswith(names)}
print("ENV", json.dumps({"env": env, "session": os.getsid(0) == os.getpid()}, sort_keys=True))
dist.destroy_process_group()
"""


def _rank_envs(torchrun: bool) -> list[dict[str, object]]:
    result = run_variant(
        ENV_SCRIPT, None, "snippets/demo/after.py", launch=Launch(nproc=2, torchrun=torchrun)
    )
    assert result.ok, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("ENV ")]
    return [json.loads(line[4:]) for line in lines]


def test_the_forked_ranks_get_what_torchrun_gives_its_workers() -> None:
    """The harness forks the ranks from one import of torch (generator.records.ranks) unless a
    launch asks for torchrun: each rank sees the variables torchrun sets, with the same values
    but for the port, the run's id and the error file, and leads a session of its own."""
    fork, real = _rank_envs(torchrun=False), _rank_envs(torchrun=True)
    assert len(fork) == len(real) == 2
    varying = {"MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_ERROR_FILE"}
    for ours, theirs in zip(fork, real, strict=True):
        assert ours["session"] is theirs["session"] is True
        a, b = ours["env"], theirs["env"]
        assert isinstance(a, dict) and isinstance(b, dict)
        assert set(a) == set(b), set(a) ^ set(b)
        assert {k: v for k, v in a.items() if k not in varying} == {
            k: v for k, v in b.items() if k not in varying
        }
    assert {e["env"]["TORCHELASTIC_RUN_ID"] for e in fork} == {
        fork[0]["env"]["TORCHELASTIC_RUN_ID"]
    }


@pytest.mark.parametrize("torchrun", [False, True], ids=["forked", "torchrun"])
def test_a_failing_rank_stops_the_other_and_the_job_exits_1(torchrun: bool) -> None:
    """As torchrun does: when one rank fails, the launcher stops the rank that is still
    running (here asleep for 2 minutes) and exits 1, long before the harness's timeout."""
    script = (
        "import sys, time\nimport torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "if dist.get_rank() == 1:\n    sys.exit(3)\n"
        "time.sleep(120)\n"
    )
    result = run_variant(
        script,
        None,
        "snippets/demo/after.py",
        timeout=60,
        launch=Launch(nproc=2, torchrun=torchrun),
    )
    assert not result.ok and not result.timed_out, result.output
    assert "exit code 1," in result.output, result.output
    assert "--- rank 0 (stopped) ---" in result.output, result.output


def test_no_rank_outlives_a_harness_killed_with_sigkill(tmp_path: Path) -> None:
    """The launcher runs in a session of its own (the harness kills the job by its groups), so
    it watches the process that started it: when that one is killed (kill -9), the launcher
    stops the ranks, here asleep for 2 minutes, instead of leaving them running."""
    pids = tmp_path / "pids"
    pids.mkdir()
    script = (
        "import os, time\nimport torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        f"open(os.path.join({str(pids)!r}, str(os.getpid())), 'w').close()\n"
        "time.sleep(120)\n"
    )
    harness = (
        "import sys\nfrom generator.records.harness import run_variant\n"
        "from generator.records.schema import Launch\n"
        "run_variant(sys.stdin.read(), None, 'snippets/demo/after.py', timeout=300,"
        " launch=Launch(nproc=2))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", harness], stdin=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    proc.stdin.write(script)
    proc.stdin.close()
    deadline = time.monotonic() + 60
    while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    ranks = [int(p.name) for p in pids.iterdir()]
    assert len(ranks) == 2, ranks
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 15  # SIGTERM, then SIGKILL after 5 s
    while any(_alive(pid) for pid in ranks) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in ranks if _alive(pid)], "a rank outlived its harness"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead: it waits only for its parent (here, init) to reap it.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")
