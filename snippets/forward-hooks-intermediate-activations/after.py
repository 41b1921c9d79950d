# Capture intermediate activations with a forward hook, then remove it (after)
# Generated from tips/forward-hooks-intermediate-activations.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/forward-hooks-intermediate-activations/after.py
from collections import OrderedDict

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(
    OrderedDict(fc1=nn.Linear(8, 16), act=nn.ReLU(), fc2=nn.Linear(16, 4))
)

activations = {}


def save_as(name):
    def hook(module, args, output):
        activations[name] = output.detach()  # no graph attached; returns None

    return hook


x = torch.randn(4, 8)
# The handle is a context manager: the hook is removed when the block ends.
with model.act.register_forward_hook(save_as("hidden")):
    out = model(x)

# Later, the model is used as usual, and nothing is captured any more.
for _ in range(3):
    y = model(torch.randn(4, 8))
