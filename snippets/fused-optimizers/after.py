# Use the fused or foreach implementation of the optimizer (after)
# Generated from tips/fused-optimizers.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/fused-optimizers/after.py
import inspect

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def fast_optimizer(cls, params, **kwargs):
    """Build `cls` with its fastest implementation: fused if it has one, else foreach."""
    if "fused" in inspect.signature(cls).parameters:
        return cls(params, fused=True, **kwargs)
    return cls(params, foreach=True, **kwargs)


def make_model():
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)


def train(model, optimizer, steps=5):
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


torch.manual_seed(0)
x = torch.randn(64, 32, device=device)
y = torch.randint(0, 10, (64,), device=device)

torch.manual_seed(1)
adamw_model = make_model()
adamw = fast_optimizer(torch.optim.AdamW, adamw_model.parameters(), lr=1e-3, weight_decay=0.01)
train(adamw_model, adamw)

torch.manual_seed(1)
rmsprop_model = make_model()
rmsprop = fast_optimizer(torch.optim.RMSprop, rmsprop_model.parameters(), lr=1e-3)
train(rmsprop_model, rmsprop)
