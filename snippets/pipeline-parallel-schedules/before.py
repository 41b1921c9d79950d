# Split a deep model into pipeline stages with `torch.distributed.pipelining` and feed micro-batches through a 1F1B schedule, not one batch at a time (before)
# Generated from tips/pipeline-parallel-schedules.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/pipeline-parallel-schedules/before.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


def make_model():
    torch.manual_seed(0)  # every rank starts from the same weights
    return nn.Sequential(*[nn.Sequential(nn.Linear(32, 32), nn.GELU()) for _ in range(4)], nn.Linear(32, 10))


def global_batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 32, generator=g), torch.randint(0, 10, (16,), generator=g)


# GPUs: torch.cuda.set_device(local_rank) and the backend "nccl".
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank = dist.get_rank()
bounds = [0, 2, 5]  # rank 0: blocks 0-1; rank 1: blocks 2-3 and the head
part = make_model()[bounds[rank]:bounds[rank + 1]]
optimizer = torch.optim.AdamW(part.parameters(), lr=1e-3)


def train_step(x, y):
    optimizer.zero_grad()
    if rank == 0:
        h = part(x)
        dist.send(h.detach(), dst=1)  # the whole batch at once
        grad = torch.empty_like(h)
        dist.recv(grad, src=1)  # idle through rank 1's forward and backward
        h.backward(grad)
    else:
        h = torch.empty(x.shape[0], 32)
        dist.recv(h, src=0)  # idle through rank 0's forward
        h.requires_grad_()
        F.cross_entropy(part(h), y).backward()
        dist.send(h.grad, dst=0)
    optimizer.step()


x, y = global_batch()
train_step(x, y)
dist.destroy_process_group()
