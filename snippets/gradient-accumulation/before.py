# Accumulate gradients over micro-batches, dividing each loss by their number (before)
# Generated from tips/gradient-accumulation.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/gradient-accumulation/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def train_epoch(model, optimizer, micro_batches, accum_steps):
    loss_fn = nn.MSELoss()
    for i, (x, y) in enumerate(micro_batches):
        loss = loss_fn(model(x), y)  # not divided: the gradients of N means add up
        loss.backward()
        if (i + 1) % accum_steps == 0:  # the trailing short group never steps
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(28, 8, device=device), torch.randn(28, 1, device=device)
micro_batches = list(zip(x.split(4), y.split(4), strict=True))  # 7 micro-batches of 4 samples
accum_steps = 4

for _ in range(3):
    train_epoch(model, optimizer, micro_batches, accum_steps)
