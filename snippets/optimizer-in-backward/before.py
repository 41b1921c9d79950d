# Fuse the optimizer step into backward, so each gradient is freed as soon as it is used (before)
# Generated from tips/optimizer-in-backward.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/optimizer-in-backward/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1)
    ).to(device)


def build(model, lr=1e-3):
    """The usual loop: one optimizer, stepped after the whole backward pass."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)

    def train_step(x, y):
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()  # here every parameter's gradient is alive at once
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    return train_step, optimizer


model = make_model()
train_step, optimizer = build(model)
x = torch.randn(64, 32, device=device)
y = torch.randn(64, 1, device=device)
for _ in range(5):
    loss = train_step(x, y)
print(f"loss {loss.item():.4f}")
