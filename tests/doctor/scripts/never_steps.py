"""Robustness: the script never steps an optimizer (an evaluation run)."""

import torch
from torch import nn

model = nn.Linear(4, 1).eval()
with torch.inference_mode():
    for _ in range(10):
        model(torch.randn(2, 4))
print("evaluated")
