"""Planted: a loss history that keeps every step's autograd graph."""

import torch
from torch import nn

model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
history = []
for _step in range(1000):
    loss = model(torch.randn(32, 16)).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    history.append(loss)  # planted: graph_kept
