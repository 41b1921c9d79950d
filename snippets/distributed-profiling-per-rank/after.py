# Distributed profiling: one trace per rank, with named phases, for HTA or nsys (after)
# Generated from tips/distributed-profiling-per-rank.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/distributed-profiling-per-rank/after.py
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import (
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)

# GPUs: torch.cuda.set_device(local_rank), the backend "nccl", and ProfilerActivity.CUDA.
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

trace_dir = "traces"  # one folder per job, on a file system that every node can reach
with profile(
    activities=[ProfilerActivity.CPU],
    schedule=schedule(wait=1, warmup=1, active=2),  # the same steps on every rank
    on_trace_ready=tensorboard_trace_handler(trace_dir, worker_name=f"rank{rank}"),
) as prof:
    for _ in range(4):
        with record_function("data"):
            x, y = torch.randn(32, 64), torch.randn(32, 1)
        with record_function("forward"):
            loss = nn.functional.mse_loss(model(x), y)
        with record_function("backward"):  # DDP all-reduces gradient buckets in here
            loss.backward()
        with record_function("optimizer"):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        prof.step()
dist.destroy_process_group()
# Then: Perfetto, or HTA's TraceAnalysis(trace_dir=trace_dir).get_comm_comp_overlap()
