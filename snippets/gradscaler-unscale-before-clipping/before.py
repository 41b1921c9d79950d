# Call scaler.unscale_(optimizer) before clipping fp16 gradients (before)
# Generated from tips/gradscaler-unscale-before-clipping.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/gradscaler-unscale-before-clipping/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler(device)  # fp16 needs loss scaling
max_norm = 1.0
x = torch.randn(64, 16, device=device)
y = torch.randn(64, 1, device=device)


def train_step(x, y):
    optimizer.zero_grad(set_to_none=True)
    with torch.amp.autocast(device, dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    # The gradients are still multiplied by the loss scale here.
    total_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)
    scaler.step(optimizer)  # divides the (already clipped) gradients by the scale
    scaler.update()
    return total_norm


grad_norms = [train_step(x, y) for _ in range(3)]
