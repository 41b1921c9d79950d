"""Planted: Adam with foreach=False, the for-loop over parameter tensors."""

import torch
from torch import nn

# Many small parameter tensors: the per-tensor loop is most of the step.
model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(24)])
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)  # planted: optimizer_loop
for _step in range(1000):
    loss = model(torch.randn(2, 4)).sum()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
