# Keep an EMA or SWA of the weights with AveragedModel, and recompute BatchNorm statistics for it (before)
# Generated from tips/weight-ema-swa.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/weight-ema-swa/before.py
import io

import torch
from torch import nn
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
EMA_DECAY = 0.9
SWA_START = 3


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(8, 32, bias=False), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 1)
    ).to(device)


def make_ema(model):
    return AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(EMA_DECAY))


def train_epoch(model, optimizer, loader, ema):
    model.train()
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    ema.update_parameters(model)  # once per epoch


torch.manual_seed(0)
data = TensorDataset(torch.randn(256, 8, device=device), torch.randn(256, 1, device=device))
loader = DataLoader(data, batch_size=32, shuffle=True)
bn_loader = DataLoader(data, batch_size=64)

model = make_model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
ema = make_ema(model)
swa = AveragedModel(model)
swa_scheduler = SWALR(optimizer, swa_lr=0.02, anneal_epochs=2)

for epoch in range(6):
    train_epoch(model, optimizer, loader, ema)
    if epoch >= SWA_START:
        swa.update_parameters(model)
        swa_scheduler.step()

# The averaged weights are evaluated with the BatchNorm statistics of the last model.
ema.eval()
swa.eval()
x_val = torch.randn(64, 8, device=device)
with torch.no_grad():
    ema_out, swa_out = ema(x_val), swa(x_val)
buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "ema": ema.module.state_dict(),
            "swa": swa.module.state_dict()}, buffer)
