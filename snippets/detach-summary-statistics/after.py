# Detach losses and metrics before keeping them across steps (after)
# Generated from tips/detach-summary-statistics.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/detach-summary-statistics/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
batches = [
    (torch.randn(32, 20, device=device), torch.randn(32, 1, device=device)) for _ in range(8)
]

epoch_means = []  # Python floats, one per epoch
step_history = []  # Python floats, one per step
for _ in range(2):
    running_loss = torch.zeros((), device=device)
    step_losses = []
    for x, y in batches:
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        running_loss += loss.detach()  # a value on the device: no graph, no GPU sync
        step_losses.append(loss.detach())
    # Convert once per epoch: one device-to-host copy instead of one per step.
    epoch_means.append(running_loss.item() / len(batches))
    step_history.extend(torch.stack(step_losses).tolist())
print(f"mean loss per epoch: {epoch_means}")
