"""Planted: a .item() every step, reached through a helper function."""

import torch
from torch import nn


def as_number(loss: torch.Tensor) -> float:
    return loss.item()  # planted: sync


model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(1000):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step}: loss {as_number(loss):.4f}")
