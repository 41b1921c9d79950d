# Delete the loaded checkpoint dict once its weights are in the model (after)
# Generated from tips/free-loaded-checkpoint.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/free-loaded-checkpoint/after.py
import io

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def make_model():
    return nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)


def make_checkpoint():
    """Stand-in for a checkpoint file written by an earlier run."""
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.randn(8, 256, device=device)).sum().backward()
    optimizer.step()
    buffer = io.BytesIO()
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3}
    torch.save(state, buffer)
    return buffer.getvalue()


torch.manual_seed(0)
checkpoint_bytes = make_checkpoint()

model = make_model()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
checkpoint = torch.load(io.BytesIO(checkpoint_bytes), map_location=device, weights_only=True)
model.load_state_dict(checkpoint["model"])  # copies the values into the model's own tensors
optimizer.load_state_dict(checkpoint["optimizer"])
start_epoch = checkpoint["epoch"] + 1
del checkpoint  # the dict was a second copy of every weight
