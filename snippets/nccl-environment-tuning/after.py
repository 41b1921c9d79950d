# NCCL and environment tuning: read NCCL_DEBUG=INFO, pin the network, bound hangs, measure bus bandwidth (after)
# Generated from tips/nccl-environment-tuning.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET torchrun --standalone --nproc_per_node 2 snippets/nccl-environment-tuning/after.py
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist

# A communication check for new nodes, run with the job's launch environment before training
# (the torch counterpart of nccl-tests' all_reduce_perf). One GPU per rank: NCCL; else gloo.
local_rank = int(os.environ["LOCAL_RANK"])
if torch.cuda.device_count() >= int(os.environ["LOCAL_WORLD_SIZE"]):
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device, timeout=timedelta(minutes=5))
else:
    device = torch.device("cpu")
    dist.init_process_group("gloo", timeout=timedelta(minutes=5))
rank, world = dist.get_rank(), dist.get_world_size()


def synchronize():
    if device.type == "cuda":
        torch.cuda.synchronize(device)


results = {}
for numel in (2**10, 2**16, 2**20):  # 4 KiB to 4 MiB of float32; on GPUs go up to 1 GiB and more
    x = torch.full((numel,), float(rank + 1), device=device)
    dist.all_reduce(x)  # also the warm-up: NCCL sets up its connections on first use
    if not torch.all(x == world * (world + 1) / 2):
        raise RuntimeError(f"rank {rank}: all_reduce returned a wrong sum for {numel} elements")
    iters = 5
    dist.barrier()
    synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(x)
    synchronize()  # an NCCL all_reduce returns once queued: wait for the GPU
    seconds = torch.tensor([(time.perf_counter() - start) / iters], device=device)
    dist.all_reduce(seconds, op=dist.ReduceOp.MAX)  # the slowest rank sets the pace
    size = x.numel() * x.element_size()
    algbw = size / seconds.item() / 1e9
    busbw = algbw * 2 * (world - 1) / world  # nccl-tests' bus bandwidth for all-reduce
    results[size] = (seconds.item(), algbw, busbw)
    if rank == 0:
        print(f"{dist.get_backend()} all_reduce {size:>10} B  {seconds.item() * 1e6:9.1f} us  "
              f"algbw {algbw:7.2f} GB/s  busbw {busbw:7.2f} GB/s", flush=True)
dist.destroy_process_group()
