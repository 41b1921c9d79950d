# Exclude biases and normalisation weights from weight decay with parameter groups (before)
# Generated from tips/no-weight-decay-norm-bias.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/no-weight-decay-norm-bias/before.py
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(16, 32), nn.LayerNorm(32), nn.ReLU(),
    nn.Linear(32, 32), nn.BatchNorm1d(32), nn.ReLU(),
    nn.Linear(32, 4),
)
# One group: biases and LayerNorm/BatchNorm scales are decayed like the weights.
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)

x, y = torch.randn(64, 16), torch.randint(0, 4, (64,))
for _ in range(5):
    optimizer.zero_grad(set_to_none=True)
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
