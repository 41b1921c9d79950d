# Measure GPU memory around a step with the allocator's current and peak counters (after)
# Generated from tips/measure-gpu-memory.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/measure-gpu-memory/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
on_gpu = device == "cuda"


def nbytes(tensors):
    """Bytes the given tensors occupy: number of elements times element size."""
    return sum(t.numel() * t.element_size() for t in tensors)


def allocated():
    # The CUDA counters read 0 instead of failing when CUDA is unused: ask only on a GPU.
    return torch.cuda.memory_allocated() if on_gpu else 0


torch.manual_seed(0)
start = allocated()
model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 128)).to(device)
model_delta = allocated() - start
param_bytes = nbytes(model.parameters())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(256, 512, device=device)
y = torch.randn(256, 128, device=device)

if on_gpu:
    torch.cuda.reset_peak_memory_stats()  # the peak restarts from what is allocated now
before_step = allocated()
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
optimizer.step()
optimizer.zero_grad(set_to_none=True)
del loss
kept = allocated() - before_step  # outlives the step: Adam's exp_avg and exp_avg_sq
peak = torch.cuda.max_memory_allocated() - before_step if on_gpu else 0

print(f"parameters: {param_bytes / 2**20:.2f} MiB, allocator saw {model_delta / 2**20:.2f} MiB")
print(f"step: kept {kept / 2**20:.2f} MiB, peak {peak / 2**20:.2f} MiB above its start")
