# Time GPU code with synchronisation, warm-up and repeats (before)
# Generated from tips/time-gpu-code-correctly.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/time-gpu-code-correctly/before.py
import time

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
a = torch.randn(256, 256, device=device)
b = torch.randn(256, 256, device=device)

start = time.time()
c = a @ b  # on a GPU this only queues the kernel...
elapsed = time.time() - start  # ...so this is launch time, from one cold, unwarmed call
print(f"matmul took {elapsed * 1e3:.3f} ms (misleading on a GPU)")
