# Memory-lean optimizers: factor the state with Adafactor instead of casting AdamW to bf16 (after)
# Generated from tips/memory-lean-optimizers.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/memory-lean-optimizers/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def make_model(dtype):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 256)).to(device, dtype)


# fp32 weights, and a factored second moment: one row and one column vector per matrix
# instead of AdamW's two full-size moments. (Adafactor's lr is a relative step size.)
model = make_model(torch.float32)
optimizer = torch.optim.Adafactor(model.parameters(), lr=1e-2)
torch.manual_seed(1)
x = torch.randn(64, 256, device=device)
target = torch.randn(64, 256, device=device)
losses = []
for _ in range(20):
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())  # stays on the device: no host sync per step
print(f"loss {losses[0].item():.3f} -> {losses[-1].item():.3f}")
