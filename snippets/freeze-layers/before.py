# Freeze layers with requires_grad_(False) and give the optimizer only trainable parameters (before)
# Generated from tips/freeze-layers.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/freeze-layers/before.py
import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU())  # "pretrained"
head = nn.Linear(32, 3)  # new layer for the new task
model = nn.Sequential(backbone, head)
# "Frozen" only by leaving the backbone out of the optimizer.
optimizer = torch.optim.SGD(head.parameters(), lr=0.1, momentum=0.9)


def train_step(x, y):
    model.train()
    optimizer.zero_grad(set_to_none=True)
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()


x, y = torch.randn(64, 16), torch.randint(0, 3, (64,))
for _ in range(5):
    train_step(x, y)
