# Fuse the optimizer step into backward, so each gradient is freed as soon as it is used (after)
# Generated from tips/optimizer-in-backward.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/optimizer-in-backward/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1)
    ).to(device)


def build(model, lr=1e-3):
    """One AdamW per parameter, stepped the moment that parameter's gradient is complete."""
    optimizers = {
        p: torch.optim.AdamW([p], lr=lr, weight_decay=0.01) for p in model.parameters()
    }

    def step_and_free(param):
        optimizers[param].step()
        optimizers[param].zero_grad(set_to_none=True)  # this gradient is freed right here

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step_and_free)

    def train_step(x, y):
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()  # updates every parameter: no optimizer.step(), no zero_grad()
        return loss.detach()

    return train_step, optimizers


model = make_model()
train_step, optimizers = build(model)
x = torch.randn(64, 32, device=device)
y = torch.randn(64, 1, device=device)
for _ in range(5):
    loss = train_step(x, y)
print(f"loss {loss.item():.4f}")
