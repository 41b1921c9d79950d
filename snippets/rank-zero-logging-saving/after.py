# Log, print and save checkpoints on rank 0 only (after)
# Generated from tips/rank-zero-logging-saving.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/rank-zero-logging-saving/after.py
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn


def get_rank() -> int:
    """This process's rank; 0 when no process group exists (plain `python train.py`)."""
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def barrier() -> None:
    """Wait for every rank; a no-op without a process group."""
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def train(ckpt_path: str, steps: int = 20, log_every: int = 5) -> nn.Module:
    torch.manual_seed(0)
    model = nn.Linear(8, 1)  # under DDP, save ddp_model.module.state_dict()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(64, 8), torch.randn(64, 1)
    for step in range(steps):
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if get_rank() == 0 and step % log_every == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}", flush=True)
    if get_rank() == 0:
        torch.save(model.state_dict(), ckpt_path)  # a single writer
    barrier()  # the other ranks wait here until the file is complete...
    state = torch.load(ckpt_path, map_location="cpu", weights_only=True)  # ...then read it
    model.load_state_dict(state)
    return model


# `python train.py` runs this as one process. Under torchrun, call
# dist.init_process_group() first and pass a path that every rank can see.
with tempfile.TemporaryDirectory() as tmp:
    model = train(os.path.join(tmp, "last.pt"))
