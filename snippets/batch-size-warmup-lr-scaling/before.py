# Ramp the batch size with accumulation steps and scale the learning rate with it (before)
# Generated from tips/batch-size-warmup-lr-scaling.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/batch-size-warmup-lr-scaling/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
MICRO_BATCH = 8  # samples per forward/backward
GRAD_ACCUM = 8  # the configured accumulation: a batch of 64
RAMP_STEPS = 16  # batch warm-up: start with fewer micro-batches per step


def accum_steps(step):
    return min(GRAD_ACCUM, 1 + step * GRAD_ACCUM // RAMP_STEPS)


def accumulate(model, parts):
    for x, y in parts:
        loss = nn.functional.mse_loss(model(x), y)
        (loss / GRAD_ACCUM).backward()  # the configured count, whatever this step used


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)  # one rate for every batch
data = torch.Generator().manual_seed(1)


def micro_batch():
    x = torch.randn(MICRO_BATCH, 16, generator=data)
    return x.to(device), x.sum(dim=1, keepdim=True).sin().to(device)


for step in range(24):
    optimizer.zero_grad(set_to_none=True)
    accumulate(model, [micro_batch() for _ in range(accum_steps(step))])
    optimizer.step()
print("done")
