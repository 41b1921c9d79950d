# Call retain_grad() to read the gradient of an intermediate tensor (before)
# Generated from tips/retain-grad-intermediate.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/retain-grad-intermediate/before.py
import torch
from torch import nn

torch.manual_seed(0)
layer = nn.Linear(3, 4)
x = torch.randn(2, 3)

h = layer(x)  # an intermediate (non-leaf) tensor
loss = torch.tanh(h).sum()
loss.backward()
# Only the leaves (layer.weight, layer.bias) got a .grad; h.grad was freed.
