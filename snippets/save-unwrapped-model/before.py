# Save the unwrapped model's `state_dict`, not the DDP or `torch.compile` wrapper's (before)
# Generated from tips/save-unwrapped-model.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/save-unwrapped-model/before.py
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

device = "cuda" if torch.cuda.is_available() else "cpu"
# torchrun provides the process group; a one-process group stands in here.
backend = "nccl" if device == "cuda" else "gloo"
dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))


torch.manual_seed(0)
ddp_model = DDP(make_model().to(device), device_ids=[0] if device == "cuda" else None)
optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)
x, y = torch.randn(32, 8, device=device), torch.randn(32, 2, device=device)
nn.functional.mse_loss(ddp_model(x), y).backward()
optimizer.step()

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "model.pt")
    torch.save(ddp_model.state_dict(), path)  # the wrapper's keys: "module.0.weight", ...
    state = torch.load(path, map_location="cpu", weights_only=True)  # e.g. in inference

dist.destroy_process_group()
