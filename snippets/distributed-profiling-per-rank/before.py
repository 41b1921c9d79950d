# Distributed profiling: one trace per rank, with named phases, for HTA or nsys (before)
# Generated from tips/distributed-profiling-per-rank.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/distributed-profiling-per-rank/before.py
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile, schedule

dist.init_process_group("gloo", timeout=timedelta(seconds=60))
torch.manual_seed(0)
model = DDP(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

# The single-GPU profiling code, pasted into the DDP script.
with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2)) as prof:
    for _ in range(4):
        x, y = torch.randn(32, 64), torch.randn(32, 1)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        prof.step()
prof.export_chrome_trace("trace.json")  # every rank writes this same file
dist.destroy_process_group()
