"""Robustness: the script raises after a few steps."""

import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
    optimizer.zero_grad()
    if step == 2:
        raise ValueError("the data ran out of bananas")  # planted: raises
