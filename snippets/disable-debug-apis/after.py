# Keep debugging APIs out of production training runs (after)
# Generated from tips/disable-debug-apis.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/disable-debug-apis/after.py
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 16), torch.randn(64, 1)


def train_step(inputs, targets):
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss


# Production loop: no debugging API is active.
for _ in range(3):
    loss = train_step(x, y)

# Debugging one suspicious batch: anomaly mode only for this step.
bad_x = x.clone()
bad_x[0, 0] = float("nan")
anomaly_error = None
with torch.autograd.detect_anomaly():
    try:
        train_step(bad_x, y)
    except RuntimeError as err:  # names the backward op that produced the NaN
        anomaly_error = err
print("anomaly mode found:", anomaly_error)
