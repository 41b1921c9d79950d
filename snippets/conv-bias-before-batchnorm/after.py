# Drop the convolution bias when BatchNorm follows (after)
# Generated from tips/conv-bias-before-batchnorm.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/conv-bias-before-batchnorm/after.py
import torch
from torch import nn

torch.manual_seed(0)
block = nn.Sequential(
    nn.Conv2d(3, 16, kernel_size=3, padding=1, bias=False),  # BatchNorm's beta is the bias
    nn.BatchNorm2d(16),
    nn.ReLU(),
)
x = torch.randn(8, 3, 12, 12)

block.train()
block(x).square().mean().backward()
print("parameters:", sum(p.numel() for p in block.parameters()))
