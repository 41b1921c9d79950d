# Tune hyperparameters on a small model and transfer them with μP; size the run with 6·N·D and about 20 tokens per parameter (after)
# Generated from tips/mup-hyperparameter-transfer.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/mup-hyperparameter-transfer/after.py
import math

import torch
import torch.nn.functional as F
from torch import nn

IN, OUT, BASE_WIDTH = 16, 8, 16


def make_data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(128, IN, generator=g)
    teacher = torch.randn(IN, 64, generator=g) / IN**0.5
    return x, torch.tanh(x @ teacher) @ torch.randn(64, OUT, generator=g) * 3 / 8


class MuMLP(nn.Module):
    """μP for Adam, relative to BASE_WIDTH (where it is the standard parametrisation)."""

    def __init__(self, width):
        super().__init__()
        torch.manual_seed(1)
        self.width_mult = width / BASE_WIDTH
        self.inp, self.hidden, self.out = nn.Linear(IN, width), nn.Linear(width, width), nn.Linear(width, OUT)

    def forward(self, x):
        h = F.relu(self.hidden(F.relu(self.inp(x))))
        return self.out(h) / self.width_mult  # output multiplier 1/m

    def param_groups(self, lr):
        hidden = [self.hidden.weight]  # matrices whose two dimensions both grow with width
        rest = [p for p in self.parameters() if p is not self.hidden.weight]  # input layer, biases, output
        return [{"params": hidden, "lr": lr / self.width_mult}, {"params": rest, "lr": lr}]


def final_loss(width, lr, steps=30):
    model = MuMLP(width)
    optimizer = torch.optim.Adam(model.param_groups(lr))
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        return F.mse_loss(model(x), y).item()


def compute_optimal(flops, tokens_per_param=20):
    """Chinchilla's rule of thumb: C = 6·N·D with D = 20·N."""
    params = math.sqrt(flops / (6 * tokens_per_param))
    return params, tokens_per_param * params


x, y = make_data()
LRS = [2.0**k for k in range(-9, -1)]
narrow = [final_loss(16, lr) for lr in LRS]  # one sweep, on the narrow proxy
best_lr = LRS[narrow.index(min(narrow))]
wide_loss = final_loss(256, best_lr)  # the same rate at full width
print(f"best lr at width 16: {best_lr:g}; width 256 at that lr: loss {wide_loss:.3f}")
params, tokens = compute_optimal(1e21)
print(f"1e21 FLOPs: about {params / 1e9:.1f} B parameters on {tokens / 1e9:.0f} B tokens")
