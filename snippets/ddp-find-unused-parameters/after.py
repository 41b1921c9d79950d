# Leave `find_unused_parameters` off unless some parameters really get no gradient (after)
# Generated from tips/ddp-find-unused-parameters.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/ddp-find-unused-parameters/after.py
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

device = "cuda" if torch.cuda.is_available() else "cpu"
# torchrun provides the process group; a one-process group stands in here.
backend = "nccl" if device == "cuda" else "gloo"
dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
device_ids = [0] if device == "cuda" else None


class TwoHeads(nn.Module):
    """A backbone, a main head and an auxiliary head that only some phases train."""

    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.head = nn.Linear(32, 1)
        self.aux_head = nn.Linear(32, 1)

    def forward(self, x, use_aux: bool = True):
        h = self.backbone(x)
        return self.head(h) + self.aux_head(h) if use_aux else self.head(h)


def train(ddp_model, data, use_aux):
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)
    for x, y in data:
        optimizer.zero_grad(set_to_none=True)
        nn.functional.mse_loss(ddp_model(x, use_aux=use_aux), y).backward()
        optimizer.step()


torch.manual_seed(0)
data = [(torch.randn(8, 16, device=device), torch.randn(8, 1, device=device)) for _ in range(4)]

# Every parameter is used in every step: keep the default find_unused_parameters=False.
full = TwoHeads().to(device)
train(DDP(full, device_ids=device_ids), data, use_aux=True)

# aux_head is unused in every step of this phase, the same way each time: declare the
# graph static (or freeze aux_head before wrapping) instead of searching it every step.
phase1 = TwoHeads().to(device)
train(DDP(phase1, device_ids=device_ids, static_graph=True), data, use_aux=False)

dist.destroy_process_group()
