# Freeze layers with requires_grad_(False) and give the optimizer only trainable parameters (after)
# Generated from tips/freeze-layers.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/freeze-layers/after.py
import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU())  # "pretrained"
head = nn.Linear(32, 3)  # new layer for the new task
model = nn.Sequential(backbone, head)

backbone.requires_grad_(False)  # no gradients computed or stored for these weights
trainable = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.SGD(trainable, lr=0.1, momentum=0.9)


def train_step(x, y):
    model.train()
    backbone.eval()  # keep the frozen BatchNorm statistics (and Dropout) fixed
    optimizer.zero_grad(set_to_none=True)
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()


x, y = torch.randn(64, 16), torch.randint(0, 3, (64,))
for _ in range(5):
    train_step(x, y)
print(f"trainable parameters: {sum(p.numel() for p in trainable)}")
