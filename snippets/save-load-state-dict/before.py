# Checkpoint state_dicts of the model and the optimizer, and load them with weights_only=True (before)
# Generated from tips/save-load-state-dict.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/save-load-state-dict/before.py
import io
import pickle

import torch
from torch import nn


def make_model():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


torch.manual_seed(0)
model = make_model()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x, y = torch.randn(16, 4), torch.randn(16, 2)
for _ in range(3):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()

# Pickle the whole module object; the optimizer state is not saved at all.
buffer = io.BytesIO()  # stands in for a file such as "model.pt"
torch.save(model, buffer)

buffer.seek(0)
try:
    restored = torch.load(buffer, weights_only=True)
except pickle.UnpicklingError as err:
    print("refused:", str(err).splitlines()[0])
    restored = None
