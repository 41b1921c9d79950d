# Expert parallelism for MoE: split the experts over ranks and route tokens with a differentiable all-to-all (before)
# Generated from tips/moe-expert-parallel-all-to-all.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/moe-expert-parallel-all-to-all/before.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

DIM, HIDDEN, EXPERTS, TOP_K = 16, 32, 4, 2


class MoE(nn.Module):
    """The single-device MoE layer: all experts, in one grouped matmul."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)  # every rank starts from the same weights
        self.router = nn.Linear(DIM, EXPERTS, bias=False)
        self.w_in = nn.Parameter(torch.randn(EXPERTS, DIM, HIDDEN) / DIM**0.5)
        self.w_out = nn.Parameter(torch.randn(EXPERTS, HIDDEN, DIM) / HIDDEN**0.5)

    def forward(self, x):
        weights, chosen = self.router(x).softmax(dim=-1).topk(TOP_K, dim=-1)
        chosen = chosen.flatten()
        order = chosen.argsort(stable=True)  # rows grouped by expert
        counts = torch.zeros(EXPERTS, dtype=torch.int64).scatter_add_(0, chosen, torch.ones_like(chosen))
        offsets = counts.cumsum(0).to(torch.int32)
        h = F.gelu(F.grouped_mm(x[order // TOP_K], self.w_in, offs=offsets))
        h = F.grouped_mm(h, self.w_out, offs=offsets) * weights.flatten()[order, None]
        return torch.zeros_like(x).index_add(0, order // TOP_K, h)


def global_batch(step):
    g = torch.Generator().manual_seed(step)
    return torch.randn(32, DIM, generator=g), torch.randn(32, DIM, generator=g)


# GPUs: torch.cuda.set_device(local_rank) and the backend "nccl".
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
moe = DDP(MoE())  # every rank holds every expert, its gradient and its AdamW state
optimizer = torch.optim.AdamW(moe.parameters(), lr=1e-3)
for step in range(3):
    x, y = global_batch(step)
    x, y = x.chunk(world)[rank], y.chunk(world)[rank]
    F.mse_loss(moe(x), y).backward()  # all-reduces the gradients of all experts
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
dist.destroy_process_group()
