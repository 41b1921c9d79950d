# When DDP replicas no longer fit, shard the model with FSDP2 `fully_shard`, block by block (after)
# Generated from tips/fsdp2-fully-shard.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/fsdp2-fully-shard/after.py
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard


class Block(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


def make_model():
    torch.manual_seed(0)  # every rank starts from the same weights
    return nn.Sequential(*[Block() for _ in range(4)], nn.Linear(64, 10))


def global_batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 64, generator=g), torch.randint(0, 10, (16,), generator=g)


# GPUs: torch.cuda.set_device(local_rank), backend "nccl", init_device_mesh("cuda", ...).
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
mesh = init_device_mesh("cpu", (world,))
model = make_model()
# Compute in bf16; keep fp32 shards for the optimizer; reduce gradients in fp32.
mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
for block in model[:-1]:  # one all-gather / reduce-scatter group per block...
    fully_shard(block, mesh=mesh, mp_policy=mp, reshard_after_forward=True)
fully_shard(model, mesh=mesh, mp_policy=mp, reshard_after_forward=False)  # ...then the root
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)  # created after sharding

x, y = global_batch()
x, y = x.chunk(world)[rank], y.chunk(world)[rank]  # this rank's half of the batch
optimizer.zero_grad()
logits = model(x)  # each block all-gathers its bf16 weights, runs, frees them
nn.functional.cross_entropy(logits.float(), y).backward()  # reduce-scatter: averaged grad shards
optimizer.step()  # updates this rank's fp32 shards only
dist.destroy_process_group()
