# Set expandable_segments:True when shapes vary and the OOM message shows memory "reserved but unallocated" (before)
# Generated from tips/expandable-segments-allocator.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/expandable-segments-allocator/before.py
import torch

assert torch.cuda.is_available(), "this tip is about the CUDA caching allocator"
device = "cuda"
# Pretend the GPU is nearly full: cap this process at 1 GiB, as a large model would.
total = torch.cuda.get_device_properties(0).total_memory
torch.cuda.set_per_process_memory_fraction(2**30 / total)

torch.manual_seed(0)
width = 1024
weight = torch.randn(width, width, device=device) / width**0.5


def step(seq_len):
    # Activations of a batch whose sequence length grows from step to step (sequence-length
    # warm-up, length-sorted batches): each step needs slightly larger blocks than the last.
    x = torch.randn(8, seq_len, width, device=device)
    hidden = torch.relu(x @ weight)
    return hidden.mean().item()


for seq_len in range(256, 4097, 256):
    step(seq_len)

stats = torch.cuda.memory_stats()
peak_allocated = stats["allocated_bytes.all.peak"]  # what tensors used at most
peak_reserved = stats["reserved_bytes.all.peak"]  # what the allocator held from CUDA
print(f"peak allocated {peak_allocated / 2**20:.0f} MiB, peak reserved {peak_reserved / 2**20:.0f} MiB, "
      f"cache flushes {stats['num_alloc_retries']}")
