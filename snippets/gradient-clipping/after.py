# Clip gradients between backward() and step(), and log the returned norm (after)
# Generated from tips/gradient-clipping.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/gradient-clipping/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
max_norm = 1.0
x = torch.randn(64, 16, device=device)
y = 100 * torch.randn(64, 1, device=device)  # large targets give large gradients


def train_step(x, y):
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    # After backward() (gradients exist), before step() (the update reads them).
    total_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)
    optimizer.step()
    return total_norm  # the norm BEFORE clipping, a tensor on the gradients' device


grad_norms = [train_step(x, y) for _ in range(5)]
print("gradient norms before clipping:", torch.stack(grad_norms).tolist())  # one sync
