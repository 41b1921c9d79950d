# Log, print and save checkpoints on rank 0 only (before)
# Generated from tips/rank-zero-logging-saving.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/rank-zero-logging-saving/before.py
import os
import tempfile

import torch
from torch import nn


def train(ckpt_path: str, steps: int = 20, log_every: int = 5) -> nn.Module:
    torch.manual_seed(0)
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(64, 8), torch.randn(64, 1)
    for step in range(steps):
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}", flush=True)  # on every rank
    torch.save(model.state_dict(), ckpt_path)  # every rank writes the same file at once
    return model


with tempfile.TemporaryDirectory() as tmp:
    model = train(os.path.join(tmp, "last.pt"))
