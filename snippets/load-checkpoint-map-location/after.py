# Load checkpoints with map_location, so they open on any device (after)
# Generated from tips/load-checkpoint-map-location.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/load-checkpoint-map-location/after.py
import io
import os
import tempfile

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


def load_checkpoint(f, map_location="cpu", mmap=False):
    # Rebuild every storage on map_location, whatever device the file names.
    return torch.load(f, map_location=map_location, weights_only=True, mmap=mmap)


# Serving machine: load onto the CPU, then copy into a model on its own device.
buffer.seek(0)
checkpoint = load_checkpoint(buffer)
model = make_model().to(device)
model.load_state_dict(checkpoint["model"])  # copies into the existing parameters
model.eval()
del checkpoint  # the CPU copy is no longer needed

# Straight onto the device pays off only when the loaded tensors BECOME the parameters:
# a model on the meta device holds no memory, and assign=True takes the tensors as they
# are. mmap=True maps the file (it needs a real path) instead of reading it all first.
workdir = tempfile.TemporaryDirectory()
path = os.path.join(workdir.name, "checkpoint.pt")
torch.save({"model": trained.state_dict()}, path)
with torch.device("meta"):
    fresh = make_model()
on_device = load_checkpoint(path, map_location=device, mmap=True)
fresh.load_state_dict(on_device["model"], assign=True)  # no copy: one set of weights
