# Exclude biases and normalisation weights from weight decay with parameter groups (after)
# Generated from tips/no-weight-decay-norm-bias.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/no-weight-decay-norm-bias/after.py
import torch
from torch import nn


def param_groups(model, weight_decay):
    """Decay weight matrices and kernels; leave biases and norm parameters alone."""
    decay, no_decay = [], []
    for p in model.parameters():
        if not p.requires_grad:
            continue  # frozen parameters stay out of the optimizer
        (decay if p.ndim >= 2 else no_decay).append(p)
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(16, 32), nn.LayerNorm(32), nn.ReLU(),
    nn.Linear(32, 32), nn.BatchNorm1d(32), nn.ReLU(),
    nn.Linear(32, 4),
)
optimizer = torch.optim.AdamW(param_groups(model, weight_decay=0.1), lr=1e-2)

x, y = torch.randn(64, 16), torch.randint(0, 4, (64,))
for _ in range(5):
    optimizer.zero_grad(set_to_none=True)
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
