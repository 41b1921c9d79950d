# Zero gradients by setting them to None (before)
# Generated from tips/zero-grad-set-to-none.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/zero-grad-set-to-none/before.py
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 16), torch.randn(64, 1)

for _ in range(3):
    # Zero-filling keeps every gradient buffer alive and costs a kernel per parameter.
    for p in model.parameters():
        if p.grad is not None:
            p.grad.zero_()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
