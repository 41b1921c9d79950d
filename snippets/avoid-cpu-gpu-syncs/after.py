# Avoid CPU-GPU synchronisations inside the training loop (after)
# Generated from tips/avoid-cpu-gpu-syncs.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/avoid-cpu-gpu-syncs/after.py
from contextlib import contextmanager

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
steps, log_every = 12, 4
data = torch.randn(steps, 32, 20, device=device)
targets = torch.randint(0, 3, (steps, 32), device=device)
model = nn.Linear(20, 3).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


@contextmanager
def intended_sync():
    """Mark the one host read of a log interval: the sync debug mode stays quiet inside."""
    if device != "cuda":
        yield
        return
    previous = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("default")
    try:
        yield
    finally:
        torch.cuda.set_sync_debug_mode(previous)


def train(model, optimizer):
    """Train for `steps` steps; return the mean loss of each log interval."""
    logged = []
    running_loss = torch.zeros((), device=device)
    all_finite = torch.ones((), dtype=torch.bool, device=device)
    for step in range(steps):
        loss = nn.functional.cross_entropy(model(data[step]), targets[step])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        running_loss += loss.detach()  # stays on the device, no graph kept
        all_finite &= torch.isfinite(loss.detach())
        if (step + 1) % log_every == 0:
            with intended_sync():  # one transfer per interval, for both values
                mean_loss, finite = torch.stack([running_loss / log_every, all_finite]).tolist()
            if not finite:
                raise RuntimeError(f"non-finite loss before step {step + 1}")
            logged.append(mean_loss)
            print(f"step {step + 1}: loss {mean_loss:.4f}")
            running_loss.zero_()
    return logged


if device == "cuda":
    torch.cuda.set_sync_debug_mode("warn")  # report the syncs it sees (not all of them)
logged = train(model, optimizer)
if device == "cuda":
    torch.cuda.set_sync_debug_mode("default")
