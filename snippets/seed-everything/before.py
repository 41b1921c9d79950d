# Seed Python, NumPy and PyTorch together with one function (before)
# Generated from tips/seed-everything.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/seed-everything/before.py
import random

import numpy as np
import torch


def seed_torch(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)  # redundant: manual_seed already seeds CUDA


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


seed_torch(42)
first = sample()
seed_torch(42)
second = sample()
