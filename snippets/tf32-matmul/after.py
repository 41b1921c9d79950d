# Let float32 matmuls use TF32 Tensor Cores on Ampere and newer GPUs (after)
# Generated from tips/tf32-matmul.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/tf32-matmul/after.py
import torch
from torch import nn

# Once, at start-up: float32 matmuls and convolutions may use TF32 Tensor Cores.
torch.set_float32_matmul_precision("high")
torch.backends.cudnn.conv.fp32_precision = "tf32"  # the default for convolutions

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, 10)
).to(device)
x = torch.randn(32, 3, 8, 8, device=device)
out = model(x)  # same code, same float32 tensors; TF32 inside the GEMMs on Ampere+
