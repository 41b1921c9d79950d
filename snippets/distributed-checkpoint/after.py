# Checkpoint sharded models with `torch.distributed.checkpoint`, in parallel and in the background (after)
# Generated from tips/distributed-checkpoint.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/distributed-checkpoint/after.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.checkpoint.stateful import Stateful
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

STEPS, SAVE_EVERY = 4, 2


class AppState(Stateful):
    """What a checkpoint holds: DCP calls state_dict() to save and load_state_dict() to load."""

    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def state_dict(self):
        model_sd, optim_sd = get_state_dict(self.model, self.optimizer)  # sharded: DTensors, clean names
        return {"model": model_sd, "optim": optim_sd}

    def load_state_dict(self, state_dict):
        set_state_dict(self.model, self.optimizer,
                       model_state_dict=state_dict["model"], optim_state_dict=state_dict["optim"])


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


# GPUs: torch.cuda.set_device(local_rank), the backend "cpu:gloo,cuda:nccl", init_device_mesh("cuda", ...).
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
model, optimizer = build(init_device_mesh("cpu", (dist.get_world_size(),)))
# To resume, on this or any other number of ranks (each reads only the pieces it needs):
# dcp.load({"app": AppState(model, optimizer)}, checkpoint_id="checkpoints/step-N")
ckpt_group = dist.new_group(backend="gloo")  # the background save talks on its own group
pending = None
for step in range(1, STEPS + 1):
    train_step(model, optimizer, step)
    if step % SAVE_EVERY:
        continue
    if pending is not None:
        pending.result()  # at most one checkpoint in flight
    state = {"app": AppState(model, optimizer)}
    if step < STEPS:  # copy to host memory now, write in a background thread, keep training
        pending = dcp.async_save(state, checkpoint_id=f"checkpoints/step-{step}", process_group=ckpt_group)
    else:  # the last one: nothing left to overlap with
        dcp.save(state, checkpoint_id=f"checkpoints/step-{step}")
if dist.get_rank() == 0:  # one ordinary torch.save file, for tools that know nothing of DCP
    dcp_to_torch_save(f"checkpoints/step-{STEPS}", f"checkpoints/step-{STEPS}.pt")
dist.destroy_process_group()
