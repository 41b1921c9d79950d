# Offload saved activations to host memory with save_on_cpu (before)
# Generated from tips/activation-offloading-save-on-cpu.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/activation-offloading-save-on-cpu/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def make_model(width=64, depth=4):
    torch.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU()]
    return nn.Sequential(*layers, nn.Linear(width, 1)).to(device)


def compute_loss(model, x, y):
    # Every tensor autograd saves stays in device memory until backward has used it.
    out = model(x)
    return nn.functional.mse_loss(out, y)


model = make_model()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(32, 64, device=device)
y = torch.randn(32, 1, device=device)
for _ in range(3):
    optimizer.zero_grad(set_to_none=True)
    loss = compute_loss(model, x, y)
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
