# Profile a few steady-state steps with torch.profiler (before)
# Generated from tips/profile-with-torch-profiler.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/profile-with-torch-profiler/before.py
import torch
from torch import nn
from torch.profiler import profile

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 32), torch.randn(16, 1)
steps = 5

# Everything is recorded, the first (warm-up) step included, with no step boundaries
# and no labels: the averages mix one-off costs with steady-state work.
with profile() as prof:
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()

print(prof.key_averages().table(row_limit=5))
