# Hold sub-layers in nn.ModuleList, never in a plain Python list (after)
# Generated from tips/module-list-not-python-list.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/module-list-not-python-list/after.py
import torch
from torch import nn


class ResidualMLP(nn.Module):
    def __init__(self, n_in=4, width=16, depth=3, n_out=2):
        super().__init__()
        self.stem = nn.Linear(n_in, width)
        # ModuleList registers each layer as blocks.0, blocks.1, ...
        self.blocks = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.head = nn.Linear(width, n_out)

    def forward(self, x):
        z = self.stem(x)
        for block in self.blocks:
            z = z + torch.relu(block(z))
        return self.head(z)


torch.manual_seed(0)
model = ResidualMLP()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

x, y = torch.randn(8, 4), torch.randn(8, 2)
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
optimizer.step()
