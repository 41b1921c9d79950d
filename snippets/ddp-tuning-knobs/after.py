# Tune DDP: `gradient_as_bucket_view`, `bucket_cap_mb`, a compression hook, `device_id` (and when `static_graph` matters) (after)
# Generated from tips/ddp-tuning-knobs.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/ddp-tuning-knobs/after.py
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Linear(256, 256) for _ in range(6)])  # 6 x 257 KiB of fp32


def global_batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(32, 256, generator=g), torch.randn(32, 256, generator=g)


# GPUs: torch.cuda.set_device(local_rank) and
# dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
x, y = global_batch()
x, y = x.chunk(world)[rank], y.chunk(world)[rank]  # this rank's half
ddp = DDP(
    make_model(),
    gradient_as_bucket_view=True,  # .grad are views into the all-reduce buckets: no 2nd copy
    bucket_cap_mb=0.25,  # bucket size: 25 MiB by default; tiny here to match the tiny model
)
# All-reduce 16-bit gradients: half the bytes on the wire.
# GPUs with NCCL >= 2.10: default_hooks.bf16_compress_hook (fp32's exponent range).
ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
for _ in range(4):  # DDP settles its buckets over the first steps
    ddp.zero_grad(set_to_none=False)  # keep the views: backward accumulates into the buckets
    nn.functional.mse_loss(ddp(x), y).backward()
dist.destroy_process_group()
