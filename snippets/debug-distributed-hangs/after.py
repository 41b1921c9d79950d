# Turn distributed hangs into errors that name the rank and the collective (after)
# Generated from tips/debug-distributed-hangs.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --standalone --nproc_per_node 2 snippets/debug-distributed-hangs/after.py
import time
from datetime import timedelta

import torch
import torch.distributed as dist

# Launched with TORCH_DISTRIBUTED_DEBUG=DETAIL in every rank's environment (see the command).
# Every collective now fails after 30 s instead of the default 30 min (gloo) / 10 min (NCCL).
dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = dist.get_rank()

# Bug 1: only rank 0 all-reduces a metric, so the ranks' collectives no longer line up.
# DETAIL checks each collective against the other ranks first, and raises on every rank.
weights = torch.zeros(4)
try:
    if rank == 0:
        dist.all_reduce(torch.ones(1))  # e.g. averaging the loss for the log
    dist.broadcast(weights, src=0)
except RuntimeError as err:  # printed to go on to the second bug; a real job stops here
    print(f"rank {rank}: {err}", flush=True)

# Bug 2: rank 1 is stuck (a dead data loader, an endless loop) and never arrives.
if rank == 1:
    time.sleep(600)
# Rank 0 raises after 2 s, naming the ranks that did not arrive; torchrun then stops the job.
dist.monitored_barrier(timeout=timedelta(seconds=2), wait_all_ranks=True)
dist.destroy_process_group()
