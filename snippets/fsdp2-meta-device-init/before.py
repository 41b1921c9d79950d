# Build a too-big model on the `meta` device, shard it, then materialise only each rank's shard (before)
# Generated from tips/fsdp2-meta-device-init.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/fsdp2-meta-device-init/before.py
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
torch.manual_seed(0)
model = make_model()  # every rank allocates and initialises the whole model
for layer in model:
    fully_shard(layer, mesh=mesh)
fully_shard(model, mesh=mesh)  # copies out this rank's half; the rest is freed
dist.destroy_process_group()
