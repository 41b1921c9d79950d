# Accumulate metrics as device tensors and synchronise once at the end (after)
# Generated from tips/track-metrics-on-device.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/track-metrics-on-device/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 5)).to(device)
x = torch.randn(200, 16, device=device)
y = torch.randint(0, 5, (200,), device=device)
loader = list(zip(x.split(32), y.split(32), strict=True))  # the last batch has 8 samples


@torch.inference_mode()
def accumulate(model, loader):
    """Sum correct predictions and losses on the device; nothing is copied back here."""
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=device)
    loss_sum = torch.zeros((), dtype=torch.float64, device=device)
    seen = 0
    for xb, yb in loader:
        logits = model(xb)
        correct += (logits.argmax(dim=1) == yb).sum()  # queued like any other kernel
        loss_sum += nn.functional.cross_entropy(logits, yb, reduction="sum")
        seen += len(yb)  # a Python int, known without asking the GPU
    return correct, loss_sum, seen


correct, loss_sum, seen = accumulate(model, loader)
accuracy, mean_loss = (torch.stack([correct.double(), loss_sum]) / seen).tolist()  # one sync
