# Design the LR schedule so any checkpoint can be finished: warm-up, a constant rate, then a short final decay (WSD) (before)
# Generated from tips/lr-schedule-wsd.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/lr-schedule-wsd/before.py
import copy
import math

import torch
import torch.nn.functional as F
from torch import nn

WARMUP, PEAK_LR, STEPS, D = 10, 0.5, 400, 32


def cosine(total):
    """Linear warm-up, then a cosine from the peak rate to 0 at step `total`."""
    def factor(step):
        warm = min(1.0, (step + 1) / WARMUP)
        return warm * 0.5 * (1 + math.cos(math.pi * min(step, total) / total))
    return factor


# A noisy regression with a few steep and many flat directions, like a loss valley.
g = torch.Generator().manual_seed(0)
w_true = torch.randn(1, D, generator=g)
scales = torch.logspace(0, -1.5, D)
X = torch.randn(STEPS, 16, D, generator=g) * scales  # one batch per step, the same in every run
Y = X @ w_true.T + 0.5 * torch.randn(STEPS, 16, 1, generator=g)


def make(schedule):
    torch.manual_seed(0)
    model = nn.Linear(D, 1, bias=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=PEAK_LR)
    return model, optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)


def train(model, optimizer, scheduler, start, stop):
    for step in range(start, stop):
        F.mse_loss(model(X[step]), Y[step]).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        scheduler.step()


# The length is fixed before the run starts: the cosine reaches 0 at exactly STEPS.
model, optimizer, scheduler = make(cosine(STEPS))
checkpoints = {}
for stop in range(40, STEPS + 1, 40):
    train(model, optimizer, scheduler, stop - 40, stop)
    checkpoints[stop] = copy.deepcopy(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}
    )
