# Plan memory before launch: add up weights, gradients, optimizer state and activations per rank, and check the estimate with MemTracker under FakeTensorMode (after)
# Generated from tips/memory-planning-before-launch.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/memory-planning-before-launch/after.py
import resource

import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.distributed._tools.mem_tracker import MemTracker

DIM, LAYERS, BATCH, SEQ = 128, 2, 4, 64


def make_model(dim=DIM, layers=LAYERS):
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim)) for _ in range(layers)])


def estimate(params, dim, layers, batch, seq, shard=1, bytes_per=4):
    """Bytes per rank: fp32 weights, gradients and AdamW's two moments (sharded), and the
    activations each block saves for backward: the inputs of its two linears and its GELU."""
    return {
        "weights": bytes_per * params / shard,
        "gradients": bytes_per * params / shard,
        "optimizer": 2 * bytes_per * params / shard,
        "activations": layers * batch * seq * (dim + 4 * dim + 4 * dim) * bytes_per,
    }


def measure(model, optimizer, x, steps=2):
    """Peak bytes by category over a few training steps, with MemTracker."""
    tracker = MemTracker()
    tracker.track_external(model, optimizer)
    with tracker:
        for step in range(steps):
            model(x).square().mean().backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if step < steps - 1:
                tracker.reset_mod_stats()  # MemTracker tracks one iteration of a module at a time
    return tracker.get_tracker_snapshot("peak")[x.device]


# 1. The plan: every term, per rank, for the FSDP degree you consider.
model = make_model()
params = sum(p.numel() for p in model.parameters())
plan = estimate(params, DIM, LAYERS, BATCH, SEQ)
print({k: f"{v / 2**20:.2f} MiB" for k, v in plan.items()})

# 2. The check, on this small model with real tensors...
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
measured = measure(model, optimizer, torch.randn(BATCH, SEQ, DIM))

# 3. ...and on a model too large to bother allocating: fake tensors have shapes, no storage.
rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
with FakeTensorMode():
    big = make_model(dim=4096, layers=4)
    big_params = sum(p.numel() for p in big.parameters())
    big_measured = measure(big, torch.optim.AdamW(big.parameters(), lr=1e-3), torch.randn(2, 256, 4096), steps=1)
rss_growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) * 1024
print(f"{big_params / 1e6:.0f} M parameters: tracked peak {big_measured['Total'] / 2**30:.1f} GiB")
