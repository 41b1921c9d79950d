# Free a model's GPU memory with del, gc.collect() and then empty_cache() (after)
# Generated from tips/free-memory-empty-cache.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/free-memory-empty-cache/after.py
import gc

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024))
        self.last_norm = None
        # A hook that is a bound method of the model: model -> hook -> model, a reference cycle.
        self.register_forward_hook(self._record_norm)

    def _record_norm(self, module, args, output):
        self.last_norm = output.detach().norm()

    def forward(self, x):
        return self.body(x)


torch.manual_seed(0)
model = Net().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
model(torch.randn(64, 1024, device=device)).square().mean().backward()
optimizer.step()

del model, optimizer  # every reference: the optimizer holds the parameters too
gc.collect()  # the hook's reference cycle is only broken by the garbage collector
if device == "cuda":
    torch.cuda.empty_cache()  # now the cached, unused blocks go back to the driver
