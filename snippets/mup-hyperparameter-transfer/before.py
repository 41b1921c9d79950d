# Tune hyperparameters on a small model and transfer them with μP; size the run with 6·N·D and about 20 tokens per parameter (before)
# Generated from tips/mup-hyperparameter-transfer.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/mup-hyperparameter-transfer/before.py
import torch
import torch.nn.functional as F
from torch import nn

IN, OUT = 16, 8


def make_data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(128, IN, generator=g)
    teacher = torch.randn(IN, 64, generator=g) / IN**0.5
    return x, torch.tanh(x @ teacher) @ torch.randn(64, OUT, generator=g) * 3 / 8


class MLP(nn.Module):
    """The standard parametrisation: init variance 1/fan_in, one learning rate."""

    def __init__(self, width):
        super().__init__()
        torch.manual_seed(1)
        self.inp, self.hidden, self.out = nn.Linear(IN, width), nn.Linear(width, width), nn.Linear(width, OUT)

    def forward(self, x):
        return self.out(F.relu(self.hidden(F.relu(self.inp(x)))))


def final_loss(width, lr, steps=30):
    model = MLP(width)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        return F.mse_loss(model(x), y).item()


x, y = make_data()
LRS = [2.0**k for k in range(-9, -1)]
narrow = [final_loss(16, lr) for lr in LRS]  # sweep the cheap, narrow proxy...
best_lr = LRS[narrow.index(min(narrow))]
wide_loss = final_loss(256, best_lr)  # ...and reuse its rate at full width
print(f"best lr at width 16: {best_lr:g}; width 256 at that lr: loss {wide_loss:.3f}")
