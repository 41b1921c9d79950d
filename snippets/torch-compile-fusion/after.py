# Fuse chains of pointwise ops with torch.compile (after)
# Generated from tips/torch-compile-fusion.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/torch-compile-fusion/after.py
import math

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


fused_gelu = torch.compile(gelu)  # or decorate the function with @torch.compile

x = torch.randn(4096, device=device)
y = fused_gelu(x)  # the first call compiles; later calls reuse the fused kernel
