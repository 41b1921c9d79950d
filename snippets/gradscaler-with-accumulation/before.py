# With GradScaler and gradient accumulation, step and update the scaler once per optimizer step (before)
# Generated from tips/gradscaler-with-accumulation.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/gradscaler-with-accumulation/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
ACCUM_STEPS = 4
MAX_NORM = 0.5


def train_step(model, optimizer, scaler, micro_batches):
    """Meant as one optimizer step, but the whole AMP recipe runs per micro-batch."""
    for x, y in micro_batches:
        with torch.autocast(device, dtype=torch.float16):
            loss = nn.functional.mse_loss(model(x), y) / len(micro_batches)
        scaler.scale(loss).backward()  # adds scaled grads to the already unscaled ones
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        scaler.step(optimizer)  # an update on a partial, mixed-scale sum
        scaler.update()  # the scale's growth counter runs per micro-batch
    optimizer.zero_grad(set_to_none=True)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler(device)
data = [(torch.randn(8, 16, device=device), torch.randn(8, 1, device=device)) for _ in range(8)]

for start in range(0, len(data), ACCUM_STEPS):
    train_step(model, optimizer, scaler, data[start : start + ACCUM_STEPS])
