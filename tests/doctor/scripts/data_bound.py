"""Planted: a data-bound loop. __getitem__ sleeps 2 ms a sample, num_workers=0."""

import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SlowDataset(Dataset):
    def __len__(self) -> int:
        return 512

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        time.sleep(0.002)  # decoding, augmenting...
        return torch.randn(8), torch.randn(1)


loader = DataLoader(SlowDataset(), batch_size=8, num_workers=0)  # planted: data_wait
model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for x, y in loader:
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
