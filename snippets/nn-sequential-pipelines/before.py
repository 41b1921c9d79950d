# Write straight pipelines as nn.Sequential, with named layers (before)
# Generated from tips/nn-sequential-pipelines.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/nn-sequential-pipelines/before.py
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, n_in=2, hidden=16, n_out=3):
        super().__init__()
        self.input = nn.Linear(n_in, hidden)
        self.input_act = nn.ReLU()
        self.hidden = nn.Linear(hidden, hidden)
        self.hidden_act = nn.ReLU()
        self.output = nn.Linear(hidden, n_out)

    def forward(self, x):
        # Every layer is listed a second time, and the order is only written here.
        x = self.input_act(self.input(x))
        x = self.hidden_act(self.hidden(x))
        return self.output(x)


torch.manual_seed(0)
model = MLP()
out = model(torch.randn(5, 2))
