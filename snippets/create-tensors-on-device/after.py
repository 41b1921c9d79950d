# Create tensors directly on the device that uses them (after)
# Generated from tips/create-tensors-on-device.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/create-tensors-on-device/after.py
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def build(device, batch=256, features=128):
    # Factory functions allocate and fill the tensors on `device` itself.
    noise = torch.rand(batch, features, device=device)
    mask = torch.zeros(batch, dtype=torch.bool, device=device)
    positions = torch.arange(batch, device=device)
    scale = torch.ones_like(noise)  # *_like and new_* inherit the device
    model = nn.Linear(features, 10, device=device)  # parameters created in place
    return noise, mask, positions, scale, model


torch.manual_seed(0)
noise, mask, positions, scale, model = build(device)
