# Ramp the batch size with accumulation steps and scale the learning rate with it (after)
# Generated from tips/batch-size-warmup-lr-scaling.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/batch-size-warmup-lr-scaling/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
MICRO_BATCH = 8  # samples per forward/backward: fixed, so activation memory is fixed
FINAL_ACCUM = 8  # micro-batches per step at the end of the ramp: a batch of 64
RAMP_STEPS = 16  # optimizer steps over which the batch grows linearly from 8 to 64
BASE_BATCH, BASE_LR = 8, 0.02  # the learning rate was tuned at a batch of 8
WARMUP_STEPS = 4


def accum_steps(step):
    """Micro-batches in optimizer step `step`: 1, then +1 every RAMP_STEPS / FINAL_ACCUM steps."""
    return min(FINAL_ACCUM, 1 + step * FINAL_ACCUM // RAMP_STEPS)


def lr_factor(step):
    """Multiplier of BASE_LR: linear in the batch (SGD; for Adam, math.sqrt(batch / BASE_BATCH)),
    times a linear warm-up."""
    batch = MICRO_BATCH * accum_steps(step)
    return batch / BASE_BATCH * min(1.0, (step + 1) / WARMUP_STEPS)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=BASE_LR, momentum=0.9)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)
data = torch.Generator().manual_seed(1)


def micro_batch():
    x = torch.randn(MICRO_BATCH, 16, generator=data)
    return x.to(device), x.sum(dim=1, keepdim=True).sin().to(device)


batches = []
for step in range(24):
    k = accum_steps(step)
    optimizer.zero_grad(set_to_none=True)
    for _ in range(k):
        x, y = micro_batch()
        loss = nn.functional.mse_loss(model(x), y)
        (loss / k).backward()  # divide by this step's count, not the final one
    batches.append(MICRO_BATCH * k)
    optimizer.step()
    scheduler.step()
print("batch per step:", batches)
