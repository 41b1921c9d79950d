# Measure GPU memory around a step with the allocator's current and peak counters (before)
# Generated from tips/measure-gpu-memory.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/measure-gpu-memory/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 128)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(256, 512, device=device)
y = torch.randn(256, 128, device=device)

start = torch.cuda.memory_allocated()
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
optimizer.step()
optimizer.zero_grad(set_to_none=True)
end = torch.cuda.memory_allocated()
# Misleading: only what survived the step is counted (and on CPU both reads are 0).
print(f"the step needs {(end - start) / 2**20:.2f} MiB")
