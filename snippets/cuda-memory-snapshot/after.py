# Record a CUDA memory snapshot to see what allocated every block (after)
# Generated from tips/cuda-memory-snapshot.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/cuda-memory-snapshot/after.py
import os
import tempfile

import torch
from torch import nn

device = "cuda"  # snapshots record the CUDA caching allocator

# 1. Start recording before anything is allocated (bounded: the last 100k events).
torch.cuda.memory._record_memory_history(max_entries=100_000)

# 2. Run the code to inspect: here three training steps.
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    x = torch.randn(256, 1024, device=device)
    loss = model(x).square().mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)

# 3. Save the snapshot, then stop recording.
snapshot_dir = tempfile.mkdtemp()
snapshot_path = os.path.join(snapshot_dir, "snapshot.pickle")
torch.cuda.memory._dump_snapshot(snapshot_path)  # drop this file on pytorch.org/memory_viz
torch.cuda.memory._record_memory_history(enabled=None)
print(f"memory snapshot written to {snapshot_path}")
