# Checkpoint sharded models with `torch.distributed.checkpoint`, in parallel and in the background (before)
# Generated from tips/distributed-checkpoint.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/distributed-checkpoint/before.py
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

STEPS, SAVE_EVERY = 4, 2


def build(mesh):
    """An FSDP2 model sharded over the mesh, and its optimizer."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8))
    for layer in (model[0], model[2]):
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-2)


def train_step(model, optimizer, step):
    x = torch.randn(8, 32, generator=torch.Generator().manual_seed(step))
    model(x).square().mean().backward()
    optimizer.step()
    optimizer.zero_grad()


def save(model, optimizer, path):
    """Gather the full model and optimizer state on rank 0, which writes it alone."""
    full = get_state_dict(model, optimizer, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if dist.get_rank() == 0:
        torch.save(full, path)
    dist.barrier()  # the others wait for the single writer


# GPUs: torch.cuda.set_device(local_rank), the backend "nccl", init_device_mesh("cuda", ...).
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
model, optimizer = build(init_device_mesh("cpu", (dist.get_world_size(),)))
os.makedirs("checkpoints", exist_ok=True)
for step in range(1, STEPS + 1):
    train_step(model, optimizer, step)
    if step % SAVE_EVERY == 0:
        save(model, optimizer, f"checkpoints/step-{step}.pt")  # training waits for the write
# To resume, every rank reads the whole file and keeps its shards:
# set_state_dict(model, optimizer, *torch.load(path), options=StateDictOptions(full_state_dict=True))
dist.destroy_process_group()
