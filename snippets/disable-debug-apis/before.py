# Keep debugging APIs out of production training runs (before)
# Generated from tips/disable-debug-apis.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/disable-debug-apis/before.py
import torch
from torch import nn

# Added while hunting a NaN weeks ago, never removed: on for the whole process.
torch.autograd.set_detect_anomaly(True)

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 16), torch.randn(64, 1)

for _ in range(3):
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
