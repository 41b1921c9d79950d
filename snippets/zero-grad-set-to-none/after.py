# Zero gradients by setting them to None (after)
# Generated from tips/zero-grad-set-to-none.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/zero-grad-set-to-none/after.py
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 16), torch.randn(64, 1)

for _ in range(3):
    optimizer.zero_grad(set_to_none=True)  # free the gradients; backward() recreates them
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()

optimizer.zero_grad(set_to_none=True)
