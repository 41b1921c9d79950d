"""Robustness: the script ends (sys.exit(0)) before the doctor's last step."""

import sys

import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
    optimizer.zero_grad()
    if step == 4:
        sys.exit(0)
