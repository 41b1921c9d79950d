# Turn distributed hangs into errors that name the rank and the collective (after)
# Generated from tips/debug-distributed-hangs.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/debug-distributed-hangs/after.py
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# A job with two classic bugs. Each rank writes what it saw to report<rank>.json.
SCRIPT = '''
import json
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def main(out_dir):
    # Every collective now fails after 30 s instead of the default 30 min (gloo) / 10 min (NCCL).
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    rank = dist.get_rank()
    report = {}

    # Bug 1: only rank 0 all-reduces a metric, so the ranks' collectives no longer line up.
    # TORCH_DISTRIBUTED_DEBUG=DETAIL checks each collective against the other ranks first.
    weights = torch.zeros(4)
    try:
        if rank == 0:
            dist.all_reduce(torch.ones(1))  # e.g. averaging the loss for the log
        dist.broadcast(weights, src=0)
    except RuntimeError as err:  # caught only to report it; a real job would stop here
        report["mismatch"] = str(err)
    with open(f"{out_dir}/report{rank}.json", "w") as f:
        json.dump(report, f)

    # Bug 2: rank 1 is stuck (a dead data loader, an endless loop) and never arrives.
    if rank == 1:
        time.sleep(600)
    start = time.monotonic()
    try:
        dist.monitored_barrier(timeout=timedelta(seconds=2), wait_all_ranks=True)
    except RuntimeError as err:  # names the ranks that did not arrive
        report["barrier"] = str(err)
        report["barrier_s"] = time.monotonic() - start
        with open(f"{out_dir}/report{rank}.json", "w") as f:
            json.dump(report, f)
        raise  # rank 0 fails, so torchrun stops the whole job
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
'''


def torchrun(script: Path, *args: str, env: dict, nproc: int = 2, timeout: float = 120) -> int | None:
    """Run `torchrun --standalone --nproc_per_node=<nproc> script args`: its exit code,
    or None if it was still running after `timeout` seconds and had to be killed."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc_per_node={nproc}", str(script), *args]
    proc = subprocess.Popen(cmd, env={**os.environ, **env, "CUDA_VISIBLE_DEVICES": ""})
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.terminate()  # torchrun passes SIGTERM on to its workers
        proc.wait()
        return None


tmp = tempfile.TemporaryDirectory()  # removed when the program exits
workdir = Path(tmp.name)
script = workdir / "train.py"
script.write_text(SCRIPT)
exit_code = torchrun(script, str(workdir), env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL"})
reports = [json.loads((workdir / f"report{r}.json").read_text()) for r in range(2)]
