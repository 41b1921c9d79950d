# Save the unwrapped model's `state_dict`, not the DDP or `torch.compile` wrapper's (after)
# Generated from tips/save-unwrapped-model.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/save-unwrapped-model/after.py
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
from torch.nn.parallel import DistributedDataParallel as DDP

device = "cuda" if torch.cuda.is_available() else "cpu"
# torchrun provides the process group; a one-process group stands in here.
backend = "nccl" if device == "cuda" else "gloo"
dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))


def unwrap(model: nn.Module) -> nn.Module:
    """The plain model under DDP / DataParallel (`.module`) and torch.compile (`._orig_mod`)."""
    while True:
        if isinstance(model, (DDP, nn.DataParallel)):
            model = model.module
        elif isinstance(getattr(model, "_orig_mod", None), nn.Module):
            model = model._orig_mod
        else:
            return model


torch.manual_seed(0)
model = make_model().to(device)
# In place: no OptimizedModule wrapper, so no "_orig_mod." in the keys. (backend="eager"
# keeps this example fast; leave it out for the default inductor backend.)
model.compile(backend="eager")
ddp_model = DDP(model, device_ids=[0] if device == "cuda" else None)  # shares model's weights
optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)
x, y = torch.randn(32, 8, device=device), torch.randn(32, 2, device=device)
nn.functional.mse_loss(ddp_model(x), y).backward()
optimizer.step()

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "model.pt")
    torch.save(unwrap(ddp_model).state_dict(), path)  # keys "0.weight", ...: no prefix
    state = torch.load(path, map_location="cpu", weights_only=True)

restored = make_model()
restored.load_state_dict(state)  # strict=True by default

# An old checkpoint saved from the wrapper: strip the prefix in place, then load.
old_state = ddp_model.state_dict()
consume_prefix_in_state_dict_if_present(old_state, "module.")
make_model().to(device).load_state_dict(old_state)

dist.destroy_process_group()
