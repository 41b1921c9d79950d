# Capture intermediate activations with a forward hook, then remove it (before)
# Generated from tips/forward-hooks-intermediate-activations.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/forward-hooks-intermediate-activations/before.py
from collections import OrderedDict

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(
    OrderedDict(fc1=nn.Linear(8, 16), act=nn.ReLU(), fc2=nn.Linear(16, 4))
)

activations = []


def keep_output(module, args, output):
    activations.append(output)  # the raw output, graph and all


model.act.register_forward_hook(keep_output)  # the handle is thrown away

x = torch.randn(4, 8)
out = model(x)  # the one activation we wanted

# Later, the model is used as usual, with the hook still attached.
for _ in range(3):
    y = model(torch.randn(4, 8))
