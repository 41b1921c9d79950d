# Leave `find_unused_parameters` off unless some parameters really get no gradient (before)
# Generated from tips/ddp-find-unused-parameters.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/ddp-find-unused-parameters/before.py
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

device = "cuda" if torch.cuda.is_available() else "cpu"
# torchrun provides the process group; a one-process group stands in here.
backend = "nccl" if device == "cuda" else "gloo"
dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
# "Just in case": DDP now walks the autograd graph after every forward pass.
ddp_model = DDP(model, device_ids=[0] if device == "cuda" else None, find_unused_parameters=True)
optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)
data = [(torch.randn(8, 16, device=device), torch.randn(8, 1, device=device)) for _ in range(4)]

for x, y in data:
    optimizer.zero_grad(set_to_none=True)
    nn.functional.mse_loss(ddp_model(x), y).backward()
    optimizer.step()

dist.destroy_process_group()
