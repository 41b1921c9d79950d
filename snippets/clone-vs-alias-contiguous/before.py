# Copy tensors with clone(), and make them contiguous before view() (before)
# Generated from tips/clone-vs-alias-contiguous.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/clone-vs-alias-contiguous/before.py
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

# Meant as snapshots of the current weights, but both are aliases.
best_weight = model.weight  # the very same tensor
best_state = model.state_dict()  # tensors that share the parameters' memory

x, y = torch.randn(8, 4), torch.randn(8, 2)
nn.functional.mse_loss(model(x), y).backward()
optimizer.step()  # updates the parameters in place, and the "snapshots" with them

# A channels-last batch (N, H, W, C) reordered to (N, C, H, W).
images = torch.randn(2, 5, 5, 3)
chw = images.permute(0, 3, 1, 2)  # a view with permuted strides
# Flattening each image for a linear layer:
# chw.view(2, -1) raises: view size is not compatible with input tensor's size and stride
