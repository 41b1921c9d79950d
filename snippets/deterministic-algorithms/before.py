# Make runs repeatable with torch.use_deterministic_algorithms(True) (before)
# Generated from tips/deterministic-algorithms.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/deterministic-algorithms/before.py
import torch

torch.manual_seed(0)
torch.backends.cudnn.deterministic = True  # only covers cuDNN convolutions
torch.backends.cudnn.benchmark = False

device = "cuda" if torch.cuda.is_available() else "cpu"
index = torch.tensor([0, 0, 1], device=device)  # a repeated index: write order undefined
out = torch.zeros(2, device=device).put_(index, torch.tensor([1.0, 2.0, 3.0], device=device))
