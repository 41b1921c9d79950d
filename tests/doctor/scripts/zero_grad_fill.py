"""Planted: zero_grad(set_to_none=False) fills the gradients with zeros every step."""

import torch
from torch import nn

model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for _step in range(1000):
    loss = model(torch.randn(4, 64)).sum()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=False)  # planted: zero_grad_fill
