# Detach losses and metrics before keeping them across steps (before)
# Generated from tips/detach-summary-statistics.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/detach-summary-statistics/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
batches = [
    (torch.randn(32, 20, device=device), torch.randn(32, 1, device=device)) for _ in range(8)
]

total_loss = 0
losses = []
for x, y in batches:
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss  # a tensor with grad_fn: chains every step's graph together
    losses.append(loss)  # keeps each step's graph alive for as long as the list lives
mean_loss = total_loss / len(batches)
print(f"mean loss {mean_loss}")
