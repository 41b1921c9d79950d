# Create tensors directly on the device that uses them (before)
# Generated from tips/create-tensors-on-device.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/create-tensors-on-device/before.py
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def build(device, batch=256, features=128):
    # Each tensor is created in host memory first, then copied to the device.
    noise = torch.rand(batch, features).to(device)
    mask = torch.zeros(batch, dtype=torch.bool).to(device)
    positions = torch.tensor(list(range(batch))).to(device)
    model = nn.Linear(features, 10).to(device)  # weights initialised on the CPU, then copied
    return noise, mask, positions, model


torch.manual_seed(0)
noise, mask, positions, model = build(device)
