# Copy tensors with clone(), and make them contiguous before view() (after)
# Generated from tips/clone-vs-alias-contiguous.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/clone-vs-alias-contiguous/after.py
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

# Independent copies, outside the autograd graph.
best_weight = model.weight.detach().clone()
best_state = {name: t.detach().clone() for name, t in model.state_dict().items()}

x, y = torch.randn(8, 4), torch.randn(8, 2)
nn.functional.mse_loss(model(x), y).backward()
optimizer.step()  # the snapshots keep the old values

images = torch.randn(2, 5, 5, 3)
chw = images.permute(0, 3, 1, 2)
flat = chw.contiguous().view(2, -1)  # copy into row-major layout, then view
flat_too = chw.reshape(2, -1)  # reshape copies only when it has to
