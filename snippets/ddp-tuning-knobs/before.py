# Tune DDP: `gradient_as_bucket_view`, `bucket_cap_mb`, a compression hook, `device_id` (and when `static_graph` matters) (before)
# Generated from tips/ddp-tuning-knobs.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/ddp-tuning-knobs/before.py
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Linear(256, 256) for _ in range(6)])  # 6 x 257 KiB of fp32


def global_batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(32, 256, generator=g), torch.randn(32, 256, generator=g)


# GPUs: torch.cuda.set_device(local_rank) and the backend "nccl".
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
x, y = global_batch()
x, y = x.chunk(world)[rank], y.chunk(world)[rank]  # this rank's half
ddp = DDP(make_model())  # defaults: each .grad is copied into 25 MiB buckets and back
for _ in range(4):
    ddp.zero_grad()
    nn.functional.mse_loss(ddp(x), y).backward()
dist.destroy_process_group()
