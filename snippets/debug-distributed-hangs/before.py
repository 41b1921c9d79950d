# Turn distributed hangs into errors that name the rank and the collective (before)
# Generated from tips/debug-distributed-hangs.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/debug-distributed-hangs/before.py
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")  # default timeout: 30 min (gloo), 10 min (NCCL)
rank = dist.get_rank()

# Bug 1: only rank 0 all-reduces a metric, so the ranks' collectives no longer line up.
weights = torch.zeros(4)
if rank == 0:
    dist.all_reduce(torch.ones(1))  # e.g. averaging the loss for the log
dist.broadcast(weights, src=0)

# Bug 2: rank 1 is stuck (a dead data loader, an endless loop) and never arrives.
if rank == 1:
    time.sleep(600)
dist.barrier()
dist.destroy_process_group()
