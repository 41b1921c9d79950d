# Avoid CPU-GPU synchronisations inside the training loop (before)
# Generated from tips/avoid-cpu-gpu-syncs.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/avoid-cpu-gpu-syncs/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
steps, log_every = 12, 4
data = torch.randn(steps, 32, 20, device=device)
targets = torch.randint(0, 3, (steps, 32), device=device)
model = nn.Linear(20, 3).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

host_reads = []  # each entry is one blocking GPU-to-CPU copy
for step in range(steps):
    loss = nn.functional.cross_entropy(model(data[step]), targets[step])
    if torch.isnan(loss):  # Python `if` on a tensor: sync
        raise RuntimeError("loss is NaN")
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    host_reads.append(loss.item())  # .item() every step: another sync
    if (step + 1) % log_every == 0:
        print(f"step {step + 1}: loss {sum(host_reads[-log_every:]) / log_every:.4f}")
