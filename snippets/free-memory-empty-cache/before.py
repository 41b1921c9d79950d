# Free a model's GPU memory with del, gc.collect() and then empty_cache() (before)
# Generated from tips/free-memory-empty-cache.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/free-memory-empty-cache/before.py
import gc

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.cuda.empty_cache()  # pointless: nothing has been cached yet

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
model(torch.randn(64, 1024, device=device)).square().mean().backward()
optimizer.step()

# Done with this model: try to give its memory back.
del model
gc.collect()
torch.cuda.empty_cache()
