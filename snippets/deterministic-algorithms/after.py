# Make runs repeatable with torch.use_deterministic_algorithms(True) (after)
# Generated from tips/deterministic-algorithms.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/deterministic-algorithms/after.py
import os

import torch
from torch import nn

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before the first CUDA call
torch.use_deterministic_algorithms(True)  # deterministic kernels, or an error if none exists
torch.backends.cudnn.benchmark = False  # no timing-based algorithm choice

device = "cuda" if torch.cuda.is_available() else "cpu"


def train(seed):
    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 4)
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 3, 8, 8, device=device)
    y = torch.randn(16, 4, device=device)
    for _ in range(5):
        optimizer.zero_grad(set_to_none=True)
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return torch.cat([p.detach().flatten() for p in model.parameters()])


run1 = train(seed=0)
run2 = train(seed=0)
