# Split a deep model into pipeline stages with `torch.distributed.pipelining` and feed micro-batches through a 1F1B schedule, not one batch at a time (after)
# Generated from tips/pipeline-parallel-schedules.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/pipeline-parallel-schedules/after.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.pipelining import PipelineStage, Schedule1F1B


def make_model():
    torch.manual_seed(0)  # every rank starts from the same weights
    return nn.Sequential(*[nn.Sequential(nn.Linear(32, 32), nn.GELU()) for _ in range(4)], nn.Linear(32, 10))


def global_batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 32, generator=g), torch.randint(0, 10, (16,), generator=g)


def loss_fn(logits, targets):  # run by the last stage on each micro-batch
    return F.cross_entropy(logits, targets)


# GPUs: torch.cuda.set_device(local_rank), backend "nccl", the stage on cuda:local_rank.
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
bounds = [0, 2, 5]  # rank 0: blocks 0-1; rank 1: blocks 2-3 and the head
stage_module = make_model()[bounds[rank]:bounds[rank + 1]]
stage = PipelineStage(stage_module, stage_index=rank, num_stages=world, device=torch.device("cpu"))
schedule = Schedule1F1B(stage, n_microbatches=4, loss_fn=loss_fn)  # grads scaled by 1/4
optimizer = torch.optim.AdamW(stage_module.parameters(), lr=1e-3)

x, y = global_batch()
optimizer.zero_grad()
losses = []
if rank == 0:
    schedule.step(x)  # the first stage feeds the batch, cut into 4 micro-batches
elif rank == world - 1:
    schedule.step(target=y, losses=losses)  # the last stage computes each micro-batch's loss
else:
    schedule.step()
optimizer.step()
dist.destroy_process_group()
