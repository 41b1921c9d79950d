# Accumulate metrics as device tensors and synchronise once at the end (before)
# Generated from tips/track-metrics-on-device.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/track-metrics-on-device/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 5)).to(device)
x = torch.randn(200, 16, device=device)
y = torch.randint(0, 5, (200,), device=device)
loader = list(zip(x.split(32), y.split(32), strict=True))  # the last batch has 8 samples


@torch.inference_mode()
def evaluate(model, loader):
    model.eval()
    correct, loss_sum, seen = 0, 0.0, 0
    for xb, yb in loader:
        logits = model(xb)
        correct += (logits.argmax(dim=1) == yb).sum().item()  # waits for the GPU
        loss_sum += nn.functional.cross_entropy(logits, yb, reduction="sum").item()  # again
        seen += len(yb)
    return correct / seen, loss_sum / seen


accuracy, mean_loss = evaluate(model, loader)
