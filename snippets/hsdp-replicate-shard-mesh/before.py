# On several nodes, use HSDP: `fully_shard` on a 2-D `("replicate", "shard")` mesh shards inside a node and replicates across nodes (before)
# Generated from tips/hsdp-replicate-shard-mesh.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 4 snippets/hsdp-replicate-shard-mesh/before.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.fsdp import fully_shard


class Block(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


def make_model():
    torch.manual_seed(0)  # every rank starts from the same weights
    return nn.Sequential(*[Block() for _ in range(4)], nn.Linear(32, 16))


def global_batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 32, generator=g), torch.randint(0, 16, (16,), generator=g)


# GPUs: torch.cuda.set_device(local_rank) and the backend "nccl".
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
model = make_model()
for block in model[:-1]:
    fully_shard(block)  # default mesh: all ranks of all nodes
fully_shard(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

x, y = global_batch()
x, y = x.chunk(world)[rank], y.chunk(world)[rank]
optimizer.zero_grad()
F.cross_entropy(model(x), y).backward()
optimizer.step()
dist.destroy_process_group()
