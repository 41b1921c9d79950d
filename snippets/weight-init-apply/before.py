# Initialise weights with model.apply() and the torch.nn.init functions (before)
# Generated from tips/weight-init-apply.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/weight-init-apply/before.py
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
    nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU()),  # a nested block
    nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)),
)

# Only the top level is visited, and `.data` sidesteps autograd.
for m in model.children():
    if isinstance(m, (nn.Conv2d, nn.Linear)):
        nn.init.kaiming_normal_(m.weight.data, nonlinearity="relu")
        m.bias.data.zero_()
