# Seed Python, NumPy and PyTorch together with one function (after)
# Generated from tips/seed-everything.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/seed-everything/after.py
import random

import numpy as np
import torch


def seed_everything(seed: int) -> None:
    """Seed every generator a training script usually draws from."""
    random.seed(seed)  # Python's random module
    np.random.seed(seed)  # NumPy's global generator
    torch.manual_seed(seed)  # PyTorch on the CPU and on every CUDA device


def sample():
    """Random draws from each library, the way a training script makes them."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    layer = torch.nn.Linear(4, 4, device=device)  # random weight initialisation
    return [
        torch.tensor(random.random()),  # e.g. random.shuffle in data code
        torch.from_numpy(np.random.rand(3)),  # e.g. NumPy-based augmentation
        torch.rand(3),
        layer.weight.detach(),
        torch.nn.functional.dropout(torch.ones(64, device=device), 0.5),
    ]


seed_everything(42)
first = sample()
seed_everything(42)
second = sample()
