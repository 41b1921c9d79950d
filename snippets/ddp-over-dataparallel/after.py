# Use `DistributedDataParallel` with one process per GPU, not `nn.DataParallel` (after)
# Generated from tips/ddp-over-dataparallel.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/ddp-over-dataparallel/after.py
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

EPOCHS = 2


def setup() -> torch.device:
    """Join the process group: one process per GPU, started by torchrun."""
    use_cuda = torch.cuda.is_available()
    backend = "nccl" if use_cuda else "gloo"
    if "LOCAL_RANK" in os.environ:  # torchrun sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_*
        local_rank = int(os.environ["LOCAL_RANK"])
        if use_cuda:
            torch.cuda.set_device(local_rank)
        dist.init_process_group(backend)  # reads the rendezvous from the environment
    else:  # plain `python train.py`: a one-process group, so the same code runs
        local_rank = 0
        dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    return torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))


device = setup()
torch.manual_seed(0)
model = make_model().to(device)
ddp_model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.05)

g = torch.Generator().manual_seed(1)  # the same data in every process
dataset = TensorDataset(torch.randn(64, 16, generator=g), torch.randn(64, 1, generator=g))
sampler = DistributedSampler(dataset, shuffle=True, seed=0)  # this rank's shard
# 8 samples per GPU; pinned batches make the non_blocking copies below truly asynchronous.
loader = DataLoader(
    dataset, batch_size=8, sampler=sampler, pin_memory=device.type == "cuda"
)

for epoch in range(EPOCHS):
    sampler.set_epoch(epoch)
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        loss = nn.functional.mse_loss(ddp_model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # gradients are all-reduced (averaged) across ranks here
        optimizer.step()

world_size = dist.get_world_size()
dist.destroy_process_group()
