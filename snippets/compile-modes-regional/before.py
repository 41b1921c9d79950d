# Pick a torch.compile mode, and compile the repeated block instead of the whole model (before)
# Generated from tips/compile-modes-regional.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/compile-modes-regional/before.py
import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):  # the repeated region, as in a transformer's layers
    def __init__(self, width):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 4 * width)
        self.fc2 = nn.Linear(4 * width, width)

    def forward(self, x):
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v, is_causal=True))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Model(nn.Module):
    def __init__(self, width, n_layers):
        super().__init__()
        self.embed = nn.Linear(16, width)
        self.layers = nn.ModuleList(Block(width) for _ in range(n_layers))
        self.head = nn.Linear(width, 16)

    def forward(self, x):
        x = self.embed(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


torch.manual_seed(0)
n_layers = 6
model = Model(width=32, n_layers=n_layers)
x = torch.randn(2, 8, 16)

compiled = torch.compile(model)  # one graph with every layer inlined
out = compiled(x)
out.sum().backward()
