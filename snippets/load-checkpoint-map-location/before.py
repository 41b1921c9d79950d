# Load checkpoints with map_location, so they open on any device (before)
# Generated from tips/load-checkpoint-map-location.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/load-checkpoint-map-location/before.py
import io

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def make_model():
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))


# Training machine: the weights live on the accelerator and are saved from there.
torch.manual_seed(0)
trained = make_model().to(device)
buffer = io.BytesIO()  # stands in for a file such as "checkpoint.pt"
torch.save({"model": trained.state_dict()}, buffer)


def load_checkpoint(f):
    # No map_location: every tensor goes back to the device recorded in the file.
    return torch.load(f, weights_only=True)


buffer.seek(0)
checkpoint = load_checkpoint(buffer)
