# Give each CPU training process its own share of the physical cores (before)
# Generated from tips/cpu-threads.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/cpu-threads/before.py
import os

import torch
from torch import nn

PROCESSES_PER_MACHINE = 2  # e.g. two CPU DDP ranks, or two experiments side by side

# Every process claims every logical CPU of the machine, ignoring affinity and the others.
torch.set_num_threads(os.cpu_count())

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10))
x = torch.randn(64, 256)
loss = model(x).logsumexp(dim=1).mean()
loss.backward()
