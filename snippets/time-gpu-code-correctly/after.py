# Time GPU code with synchronisation, warm-up and repeats (after)
# Generated from tips/time-gpu-code-correctly.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/time-gpu-code-correctly/after.py
import time

import torch
from torch.utils import benchmark

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
a = torch.randn(256, 256, device=device)
b = torch.randn(256, 256, device=device)


def sync():
    if device == "cuda":
        torch.cuda.synchronize()


# 1. By hand: warm up, synchronise before starting and before stopping, repeat.
for _ in range(3):
    a @ b
sync()
start = time.perf_counter()
for _ in range(20):
    a @ b
sync()
manual_ms = (time.perf_counter() - start) / 20 * 1e3

# 2. CUDA events: timestamps on the GPU's own timeline.
if device == "cuda":
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(20):
        a @ b
    end.record()
    end.synchronize()
    print(f"CUDA events: {begin.elapsed_time(end) / 20:.3f} ms")

# 3. Best: torch.utils.benchmark handles warm-up, synchronisation and repeats.
timer = benchmark.Timer(
    stmt="a @ b",
    globals={"a": a, "b": b},
    num_threads=torch.get_num_threads(),  # default 1; match the training setting
    label="matmul 256x256",
    description=device,
)
measurement = timer.blocked_autorange(min_run_time=0.2)
print(f"manual: {manual_ms:.3f} ms")
print(measurement)
