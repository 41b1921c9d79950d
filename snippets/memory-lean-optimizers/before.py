# Memory-lean optimizers: factor the state with Adafactor instead of casting AdamW to bf16 (before)
# Generated from tips/memory-lean-optimizers.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/memory-lean-optimizers/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def make_model(dtype):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 256)).to(device, dtype)


# Halve the memory by casting everything to bf16: weights, gradients and AdamW's moments.
model = make_model(torch.bfloat16)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.0)  # late in training
start = [p.detach().clone() for p in model.parameters()]
torch.manual_seed(1)
x = torch.randn(64, 256, device=device, dtype=torch.bfloat16)
for _ in range(10):
    optimizer.zero_grad(set_to_none=True)
    model(x).square().mean().backward()
    optimizer.step()
unchanged = sum((p == s).sum().item() for p, s in zip(model.parameters(), start, strict=True))
total = sum(p.numel() for p in model.parameters())
print(f"{unchanged / total:.0%} of the bf16 weights never moved")
