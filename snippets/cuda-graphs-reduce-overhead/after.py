# Cut kernel-launch overhead with torch.compile(mode="reduce-overhead") (after)
# Generated from tips/cuda-graphs-reduce-overhead.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/cuda-graphs-reduce-overhead/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 8)
).to(device).eval()
graphed = torch.compile(model, mode="reduce-overhead")  # CUDA graphs on GPU

batches = [torch.randn(16, 64, device=device) for _ in range(4)]  # one static shape
predictions = []
with torch.no_grad():
    for xb in batches:
        out = graphed(xb)
        predictions.append(out.clone())  # the next replay reuses out's memory
