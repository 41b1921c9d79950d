# Design the LR schedule so any checkpoint can be finished: warm-up, a constant rate, then a short final decay (WSD) (after)
# Generated from tips/lr-schedule-wsd.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/lr-schedule-wsd/after.py
import copy

import torch
import torch.nn.functional as F
from torch import nn

WARMUP, PEAK_LR, STEPS, D = 10, 0.5, 400, 32


def wsd(decay_start, decay_steps):
    """Warm-up-stable-decay: linear warm-up, the peak rate, then linear decay to 0."""
    def factor(step):
        warm = min(1.0, (step + 1) / WARMUP)
        return warm * min(1.0, max(0.0, (decay_start + decay_steps - step) / decay_steps))
    return factor


STABLE = wsd(decay_start=float("inf"), decay_steps=1)  # the main run never decays

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


# The main run: warm-up, then the peak rate for as long as the budget lasts, checkpointing.
model, optimizer, scheduler = make(STABLE)
checkpoints = {}
for stop in range(40, STEPS + 1, 40):
    train(model, optimizer, scheduler, stop - 40, stop)
    checkpoints[stop] = copy.deepcopy(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}
    )


def finish(length, decay_fraction=0.2):
    """A finished model of `length` steps: branch off the checkpoint at 80% of it and decay."""
    start = round(length * (1 - decay_fraction))
    model, optimizer, scheduler = make(wsd(start, length - start))  # same warm-up and peak
    model.load_state_dict(checkpoints[start]["model"])
    optimizer.load_state_dict(checkpoints[start]["optimizer"])
    scheduler.load_state_dict(checkpoints[start]["scheduler"])  # the step count; the rule is new
    train(model, optimizer, scheduler, start, length)
    return model


finished = {length: finish(length) for length in (200, 400)}  # decided after the fact
