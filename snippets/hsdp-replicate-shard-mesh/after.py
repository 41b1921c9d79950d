# On several nodes, use HSDP: `fully_shard` on a 2-D `("replicate", "shard")` mesh shards inside a node and replicates across nodes (after)
# Generated from tips/hsdp-replicate-shard-mesh.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: SHARD_SIZE=2 torchrun --standalone --nproc_per_node 4 snippets/hsdp-replicate-shard-mesh/after.py
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
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


# GPUs: torch.cuda.set_device(local_rank), backend "nccl", init_device_mesh("cuda", ...).
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
# Shard inside a node (fast links), replicate across nodes (the slower network).
gpus_per_node = int(os.environ.get("SHARD_SIZE", os.environ["LOCAL_WORLD_SIZE"]))
mesh = init_device_mesh("cpu", (world // gpus_per_node, gpus_per_node), mesh_dim_names=("replicate", "shard"))
model = make_model()
for block in model[:-1]:
    fully_shard(block, mesh=mesh)  # a 2-D mesh makes it HSDP
fully_shard(model, mesh=mesh)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

x, y = global_batch()
x, y = x.chunk(world)[rank], y.chunk(world)[rank]  # still one part of the batch per rank
optimizer.zero_grad()
F.cross_entropy(model(x), y).backward()  # reduce-scatter in the node, all-reduce across nodes
optimizer.step()
dist.destroy_process_group()
