# Write straight pipelines as nn.Sequential, with named layers (after)
# Generated from tips/nn-sequential-pipelines.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/nn-sequential-pipelines/after.py
from collections import OrderedDict

import torch
from torch import nn


def mlp(n_in=2, hidden=16, n_out=3):
    # One list: the order of construction is the order of execution.
    return nn.Sequential(
        OrderedDict(
            input=nn.Linear(n_in, hidden),
            input_act=nn.ReLU(),
            hidden=nn.Linear(hidden, hidden),
            hidden_act=nn.ReLU(),
            output=nn.Linear(hidden, n_out),
        )
    )


torch.manual_seed(0)
model = mlp()
x = torch.randn(5, 2)
out = model(x)
features = model[:4](x)  # a slice is a new Sequential that shares the same layers
print(model.hidden)  # layers are reachable by name as well as by index
