# Set expandable_segments:True when shapes vary and the OOM message shows memory "reserved but unallocated" (after)
# Generated from tips/expandable-segments-allocator.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/expandable-segments-allocator/after.py
import os

# Before the first CUDA allocation: here, before torch is even imported. (PyTorch 2.8 and
# older read PYTORCH_CUDA_ALLOC_CONF; newer releases still accept it with a warning.)
os.environ["PYTORCH_ALLOC_CONF"] = "expandable_segments:True"

import torch  # noqa: E402

assert torch.cuda.is_available(), "this tip is about the CUDA caching allocator"
device = "cuda"
total = torch.cuda.get_device_properties(0).total_memory
torch.cuda.set_per_process_memory_fraction(2**30 / total)

torch.manual_seed(0)
width = 1024
weight = torch.randn(width, width, device=device) / width**0.5


def step(seq_len):
    x = torch.randn(8, seq_len, width, device=device)
    hidden = torch.relu(x @ weight)
    return hidden.mean().item()


for seq_len in range(256, 4097, 256):
    step(seq_len)

stats = torch.cuda.memory_stats()
peak_allocated = stats["allocated_bytes.all.peak"]
peak_reserved = stats["reserved_bytes.all.peak"]
print(f"peak allocated {peak_allocated / 2**20:.0f} MiB, peak reserved {peak_reserved / 2**20:.0f} MiB, "
      f"cache flushes {stats['num_alloc_retries']}")
