# Cut kernel-launch overhead with torch.compile(mode="reduce-overhead") (before)
# Generated from tips/cuda-graphs-reduce-overhead.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/cuda-graphs-reduce-overhead/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 8)
).to(device).eval()

batches = [torch.randn(16, 64, device=device) for _ in range(4)]
predictions = []
with torch.no_grad():
    for xb in batches:
        predictions.append(model(xb))  # 5 tiny kernels, each launched from Python
