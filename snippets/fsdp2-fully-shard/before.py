# When DDP replicas no longer fit, shard the model with FSDP2 `fully_shard`, block by block (before)
# Generated from tips/fsdp2-fully-shard.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/fsdp2-fully-shard/before.py
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


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


# GPUs: torch.cuda.set_device(local_rank) and the backend "nccl".
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
model = DDP(make_model())  # every rank holds the whole model...
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)  # ...and all of AdamW's moments

x, y = global_batch()
x, y = x.chunk(world)[rank], y.chunk(world)[rank]  # this rank's half of the batch
optimizer.zero_grad()
logits = model(x)
nn.functional.cross_entropy(logits, y).backward()  # all-reduce: full averaged gradients
optimizer.step()
dist.destroy_process_group()
