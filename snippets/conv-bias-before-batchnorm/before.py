# Drop the convolution bias when BatchNorm follows (before)
# Generated from tips/conv-bias-before-batchnorm.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/conv-bias-before-batchnorm/before.py
import torch
from torch import nn

torch.manual_seed(0)
block = nn.Sequential(
    nn.Conv2d(3, 16, kernel_size=3, padding=1),  # bias=True by default: 16 wasted parameters
    nn.BatchNorm2d(16),
    nn.ReLU(),
)
x = torch.randn(8, 3, 12, 12)

block.train()
block(x).square().mean().backward()
