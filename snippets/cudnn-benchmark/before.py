# Turn on cudnn.benchmark when input shapes do not change (before)
# Generated from tips/cudnn-benchmark.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/cudnn-benchmark/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1)
).to(device)
x = torch.randn(8, 3, 32, 32, device=device)  # every batch has this shape

for _ in range(3):
    out = model(x)  # cuDNN picks each algorithm by heuristics
