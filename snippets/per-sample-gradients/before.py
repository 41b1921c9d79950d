# Get per-sample gradients with `torch.func` (`vmap(grad(...))` over `functional_call`) for DP-SGD clipping, influence and the gradient noise scale (before)
# Generated from tips/per-sample-gradients.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/per-sample-gradients/before.py
import torch
import torch.nn.functional as F
from torch import nn

CLIP, NOISE = 1.0, 0.5  # DP-SGD: bound on each sample's gradient norm, noise multiplier


def batch(step, size=32):
    g = torch.Generator().manual_seed(step)
    x = torch.randn(size, 20, generator=g)
    return x, (x[:, :10].argmax(1) + (torch.rand(size, generator=g) < 0.2).long()) % 10


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.Linear(64, 10))  # no BatchNorm, no dropout
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)


def dp_sgd_step(x, y, generator):
    optimizer.zero_grad(set_to_none=True)
    F.cross_entropy(model(x), y).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)  # bounds the batch's gradient only
    for p in model.parameters():
        p.grad += torch.normal(0.0, NOISE * CLIP, p.shape, generator=generator) / len(x)
    optimizer.step()


noise = torch.Generator().manual_seed(1)
for step in range(20):
    dp_sgd_step(*batch(step), noise)
