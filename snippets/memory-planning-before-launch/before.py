# Plan memory before launch: add up weights, gradients, optimizer state and activations per rank, and check the estimate with MemTracker under FakeTensorMode (before)
# Generated from tips/memory-planning-before-launch.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/memory-planning-before-launch/before.py
import torch
from torch import nn

DIM, LAYERS, BATCH, SEQ = 128, 2, 4, 64


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM)) for _ in range(LAYERS)])


model = make_model()
params = sum(p.numel() for p in model.parameters())
estimate = 2 * params  # "the model in bf16": the usual back-of-the-envelope figure
print(f"{params / 1e6:.2f} M parameters: planned {estimate / 2**20:.1f} MiB per GPU, so no sharding")
