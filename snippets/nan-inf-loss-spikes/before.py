# Catch NaN/Inf losses and loss spikes on the device, and skip the bad batch (before)
# Generated from tips/nan-inf-loss-spikes.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/nan-inf-loss-spikes/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
MAX_NORM = 1.0


def make_batches(steps, bad_step=None):
    g = torch.Generator().manual_seed(0)
    batches = [(torch.randn(32, 16, generator=g), torch.randn(32, 1, generator=g)) for _ in range(steps)]
    if bad_step is not None:
        batches[bad_step][0][3, 5] = float("inf")  # one corrupt sample
    return [(x.to(device), y.to(device)) for x, y in batches]


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, fused=True)
losses = []
for x, y in make_batches(20, bad_step=7):
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
    optimizer.step()
    losses.append(loss.detach())
print(f"final loss {losses[-1].item():.4f}")
