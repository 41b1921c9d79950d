# Initialise weights with model.apply() and the torch.nn.init functions (after)
# Generated from tips/weight-init-apply.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/weight-init-apply/after.py
import torch
from torch import nn


def init_weights(m):
    """Called by model.apply() once for every submodule, however deeply nested."""
    if isinstance(m, (nn.Conv2d, nn.Linear)):
        nn.init.kaiming_normal_(m.weight, nonlinearity="relu")  # std = sqrt(2 / fan_in)
        if m.bias is not None:
            nn.init.zeros_(m.bias)
    elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm, nn.LayerNorm)):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)


torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),  # BN has a bias
    nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU()),  # a nested block
    nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)),
)
model.apply(init_weights)  # nn.init runs under no_grad: no .data needed
