# Call retain_grad() to read the gradient of an intermediate tensor (after)
# Generated from tips/retain-grad-intermediate.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/retain-grad-intermediate/after.py
import torch
from torch import nn

torch.manual_seed(0)
layer = nn.Linear(3, 4)
x = torch.randn(2, 3)

h = layer(x)
h.retain_grad()  # keep dL/dh in h.grad when backward reaches h
loss = torch.tanh(h).sum()
loss.backward()

# Alternative without touching any .grad: ask autograd for dL/dh directly.
h2 = layer(x)
(dl_dh,) = torch.autograd.grad(torch.tanh(h2).sum(), [h2])
