# Use in-place operations only where autograd does not need the old value (before)
# Generated from tips/inplace-operations.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/inplace-operations/before.py
import torch
from torch import nn

torch.manual_seed(0)


class GatedBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim)

    def forward(self, x):
        g = torch.sigmoid(self.gate(x))  # sigmoid saves its OUTPUT g for backward
        g.mul_(self.proj(x))  # ...and this overwrites g in place
        return g


block = GatedBlock(16)
x = torch.randn(8, 16)
loss = block(x).pow(2).mean()  # the forward pass runs fine

error = None
try:
    loss.backward()  # the damage is only detected here
except RuntimeError as err:
    error = err
    print("backward failed:", err)
