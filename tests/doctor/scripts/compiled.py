"""Planted: a compiled model with a graph break, and recompiles as the batch size changes.

The eager backend: TorchDynamo's graph breaks and guards are the same under any backend,
without Inductor's compile time."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.a(x).relu()
        print("logging inside forward")  # planted: graph_break
        return self.b(h)


model = torch.compile(Net(), backend="eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(1000):
    x = torch.randn(4 + step, 8)  # a new batch size every step: planted: recompile
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
