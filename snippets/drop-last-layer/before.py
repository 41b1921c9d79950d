# Drop the classifier with nn.Identity, not by slicing children() (before)
# Generated from tips/drop-last-layer.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/drop-last-layer/before.py
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = torch.relu(self.conv(x))  # functional: not a child module
        x = torch.flatten(self.pool(x), 1)  # functional: not a child module
        return self.fc(x)


torch.manual_seed(0)
model = Net().eval()
x = torch.randn(4, 3, 16, 16)

# Rebuild the model from its children, minus the last one.
backbone = nn.Sequential(*list(model.children())[:-1])
with torch.no_grad():
    features = backbone(x)
