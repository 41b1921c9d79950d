# Step the LR scheduler after optimizer.step(), once per optimizer step, and checkpoint it (before)
# Generated from tips/lr-scheduler-order.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/lr-scheduler-order/before.py
import io

import torch
from torch import nn
from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR

device = "cuda" if torch.cuda.is_available() else "cpu"
BASE_LR = 1e-3
ACCUM = 4  # micro-batches per optimizer step
WARMUP = 3  # meant as optimizer steps of linear warm-up
TOTAL = 12  # optimizer steps in the whole run


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)


def make_optimizer_and_scheduler(model):
    optimizer = torch.optim.AdamW(model.parameters(), lr=BASE_LR)
    warmup = LinearLR(optimizer, start_factor=1 / WARMUP, total_iters=WARMUP - 1)
    decay = CosineAnnealingLR(optimizer, T_max=TOTAL - WARMUP)
    scheduler = SequentialLR(optimizer, [warmup, decay], milestones=[WARMUP])
    return optimizer, scheduler


def train_epoch(model, optimizer, scheduler, micro_batches):
    for i, (x, y) in enumerate(micro_batches):
        loss = nn.functional.mse_loss(model(x), y) / ACCUM
        loss.backward()
        scheduler.step()  # every micro-batch, and before the first optimizer.step()
        if (i + 1) % ACCUM == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


def save_checkpoint(model, optimizer, scheduler):
    buffer = io.BytesIO()  # stands in for a file
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    buffer.seek(0)
    return buffer  # where the schedule stands is not saved


def load_checkpoint(buffer, model, optimizer, scheduler):
    state = torch.load(buffer, weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])


torch.manual_seed(0)
x, y = torch.randn(32, 8, device=device), torch.randn(32, 1, device=device)
micro_batches = list(zip(x.split(4), y.split(4), strict=True))  # 2 optimizer steps per epoch
epochs = TOTAL * ACCUM // len(micro_batches)

model = make_model()
optimizer, scheduler = make_optimizer_and_scheduler(model)
for _epoch in range(epochs // 2):
    train_epoch(model, optimizer, scheduler, micro_batches)
checkpoint = save_checkpoint(model, optimizer, scheduler)

# Resume in a "new process": fresh objects, then the saved states.
model = make_model()
optimizer, scheduler = make_optimizer_and_scheduler(model)
load_checkpoint(checkpoint, model, optimizer, scheduler)
for _epoch in range(epochs // 2, epochs):
    train_epoch(model, optimizer, scheduler, micro_batches)
