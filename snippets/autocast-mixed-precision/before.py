# Train in mixed precision with autocast around the forward pass and the loss (before)
# Generated from tips/autocast-mixed-precision.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/autocast-mixed-precision/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
model.to(torch.bfloat16)  # "half precision": weights, gradients and updates all in bf16
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 32, device=device, dtype=torch.bfloat16)
y = torch.randint(0, 4, (64,), device=device)

for _ in range(3):
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
