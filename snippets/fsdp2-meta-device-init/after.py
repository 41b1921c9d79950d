# Build a too-big model on the `meta` device, shard it, then materialise only each rank's shard (after)
# Generated from tips/fsdp2-meta-device-init.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/fsdp2-meta-device-init/after.py
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard


def make_model():
    return nn.Sequential(*[nn.Linear(1024, 1024) for _ in range(8)])  # 34 MB in fp32


# GPUs: torch.cuda.set_device(local_rank), backend "nccl", init_device_mesh("cuda", ...).
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
mesh = init_device_mesh("cpu", (dist.get_world_size(),))
with torch.device("meta"):
    model = make_model()  # shapes and dtypes only: no memory, no initialisation
for layer in model:
    fully_shard(layer, mesh=mesh)
fully_shard(model, mesh=mesh)  # still on meta, now DTensors sharded on dim 0
model.to_empty(device=mesh.device_type)  # allocates this rank's shards only, uninitialised
# On GPUs DTensor gives every shard its own part of one random stream: seed all ranks alike.
# A CPU mesh has no such coordination, so each rank needs its own seed there.
torch.manual_seed(0 if mesh.device_type == "cuda" else dist.get_rank())
with torch.no_grad():
    for module in model.modules():
        if hasattr(module, "reset_parameters"):
            module.reset_parameters()  # sees the global shape: the right fan-in
dist.destroy_process_group()
