# Use the fused or foreach implementation of the optimizer (before)
# Generated from tips/fused-optimizers.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/fused-optimizers/before.py
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(64, 32)
y = torch.randint(0, 10, (64,))
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))

# The for-loop implementation: several small ops per parameter tensor per step.
# On CPU this is also what you get when no flag is given.
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, foreach=False)

for _ in range(5):
    optimizer.zero_grad(set_to_none=True)
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
