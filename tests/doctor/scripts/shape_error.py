"""Robustness: the script fails in its first forward pass, before any optimizer step: a
shape error raised inside torch, from the user's line."""

import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(32, 1))  # 16 features, not 32
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(10):
    loss = model(torch.randn(4, 8)).sum()  # planted: raises
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
