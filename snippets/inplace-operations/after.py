# Use in-place operations only where autograd does not need the old value (after)
# Generated from tips/inplace-operations.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/inplace-operations/after.py
import torch
from torch import nn

torch.manual_seed(0)


class GatedBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim)
        self.act = nn.ReLU(inplace=True)  # safe: Linear saved its input, not its output

    def forward(self, x):
        h = self.act(self.proj(x))  # in place on a fresh Linear output
        g = torch.sigmoid(self.gate(x))
        out = g * h  # out of place: the saved sigmoid output stays intact
        out += x  # safe: mul saved g and h, not its own result
        return out


block = GatedBlock(16)
x = torch.randn(8, 16)
loss = block(x).pow(2).mean()
loss.backward()
print("loss", loss.item())
