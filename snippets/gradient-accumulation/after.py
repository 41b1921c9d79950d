# Accumulate gradients over micro-batches, dividing each loss by their number (after)
# Generated from tips/gradient-accumulation.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/gradient-accumulation/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def train_epoch(model, optimizer, micro_batches, accum_steps):
    """One epoch that steps the optimizer once per `accum_steps` micro-batches."""
    loss_fn = nn.MSELoss()
    n = len(micro_batches)
    optimizer.zero_grad(set_to_none=True)  # nothing left over from a previous epoch
    for i, (x, y) in enumerate(micro_batches):
        group_start = i - i % accum_steps
        group_size = min(accum_steps, n - group_start)  # the last group may be shorter
        loss = loss_fn(model(x), y) / group_size  # sum of group_size means -> one mean
        loss.backward()  # adds into .grad
        if (i + 1) % accum_steps == 0 or i + 1 == n:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)  # no BatchNorm
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(28, 8, device=device), torch.randn(28, 1, device=device)
micro_batches = list(zip(x.split(4), y.split(4), strict=True))  # 7 micro-batches of 4 samples
accum_steps = 4  # steps on samples 0-15, then on the trailing group 16-27

for _ in range(3):
    train_epoch(model, optimizer, micro_batches, accum_steps)
