# Checkpoint state_dicts of the model and the optimizer, and load them with weights_only=True (after)
# Generated from tips/save-load-state-dict.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/save-load-state-dict/after.py
import io

import torch
from torch import nn


def make_model():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


torch.manual_seed(0)
model = make_model()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x, y = torch.randn(16, 4), torch.randn(16, 2)
epoch, step = 0, 0
for _ in range(3):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
    step += 1

# Save data only: state dicts plus the counters needed to resume.
buffer = io.BytesIO()  # a path such as "checkpoint.pt" works the same way
torch.save(
    {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "epoch": epoch,
        "step": step,
    },
    buffer,
)

# Resume: rebuild the objects from code, then load the saved state into them.
buffer.seek(0)
checkpoint = torch.load(buffer, weights_only=True)
resumed = make_model()
resumed.load_state_dict(checkpoint["model"])
resumed_optimizer = torch.optim.Adam(resumed.parameters(), lr=1e-2)
resumed_optimizer.load_state_dict(checkpoint["optimizer"])
start_step = checkpoint["step"]  # continue counting from here
