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


def train(model, optimizer):
    """Train for `steps` steps; return the mean loss of each log interval."""
    logged, recent = [], []
    for step in range(steps):
        loss = nn.functional.cross_entropy(model(data[step]), targets[step])
        if torch.isnan(loss):  # Python `if` on a tensor: the CPU waits for the GPU
            raise RuntimeError("loss is NaN")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        recent.append(loss.item())  # .item() every step: another wait
        if (step + 1) % log_every == 0:
            logged.append(sum(recent) / log_every)
            print(f"step {step + 1}: loss {logged[-1]:.4f}")
            recent.clear()
    return logged


logged = train(model, optimizer)
