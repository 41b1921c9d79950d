# Fuse chains of pointwise ops with torch.compile (before)
# Generated from tips/torch-compile-fusion.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/torch-compile-fusion/before.py
import math

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def gelu(x):
    # Five pointwise ops: each reads a whole tensor and writes a new one.
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


x = torch.randn(4096, device=device)
y = gelu(x)
