# Skip the gradient all-reduce on non-stepping micro-batches with `no_sync()` (after)
# Generated from tips/ddp-no-sync-accumulation.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/ddp-no-sync-accumulation/after.py
import contextlib

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

device = "cuda" if torch.cuda.is_available() else "cpu"
# torchrun provides the process group; a one-process group stands in here.
backend = "nccl" if device == "cuda" else "gloo"
dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
ACCUM_STEPS = 4


def train_step(ddp_model, optimizer, micro_batches):
    """One optimizer step over several micro-batches, with a single all-reduce."""
    for i, (x, y) in enumerate(micro_batches):
        is_last = i == len(micro_batches) - 1
        # Forward AND backward inside no_sync(): DDP decides at forward time.
        with contextlib.nullcontext() if is_last else ddp_model.no_sync():
            loss = nn.functional.mse_loss(ddp_model(x), y) / len(micro_batches)
            loss.backward()  # local accumulation; the last one all-reduces the sum
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
ddp_model = DDP(model, device_ids=[0] if device == "cuda" else None)
optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)
data = [(torch.randn(8, 16, device=device), torch.randn(8, 1, device=device)) for _ in range(8)]

for start in range(0, len(data), ACCUM_STEPS):
    train_step(ddp_model, optimizer, data[start : start + ACCUM_STEPS])

dist.destroy_process_group()
