"""Robustness: DDP on CPU (gloo) under torchrun; rank 1 reads its data slower (3 ms a
sample), rank 0 at once."""

import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


class Data(Dataset):
    def __init__(self, delay: float) -> None:
        self.delay = delay

    def __len__(self) -> int:
        return 1024

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        if self.delay:
            time.sleep(self.delay)
        return torch.randn(8), torch.randn(1)


dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Data(0.003 if rank == 1 else 0.0), batch_size=8)
try:
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
finally:
    dist.destroy_process_group()
print(f"rank {rank} of {int(os.environ['WORLD_SIZE'])} done")
