# Drop the classifier with nn.Identity, not by slicing children() (after)
# Generated from tips/drop-last-layer.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/drop-last-layer/after.py
import copy

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = torch.flatten(self.pool(x), 1)
        return self.fc(x)


torch.manual_seed(0)
model = Net().eval()
x = torch.randn(4, 3, 16, 16)

# Keep forward() as written; make the head a pass-through.
backbone = copy.deepcopy(model)  # skip the copy if the head is no longer needed
backbone.fc = nn.Identity()
with torch.no_grad():
    features = backbone(x)
