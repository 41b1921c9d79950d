# Find the largest batch that fits by catching only out-of-memory errors (after)
# Generated from tips/find-max-batch-size.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/find-max-batch-size/after.py
import gc

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def fits(step, batch_size):
    """Run one step at `batch_size`; False if it ran out of memory. Other errors propagate."""
    try:
        step(batch_size)
    except torch.OutOfMemoryError:
        oom = True  # leave the except block first: its traceback still holds the step's tensors
    else:
        oom = False
    if oom:
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()  # hand the failed attempt's blocks back before retrying
    return not oom


def find_max_batch_size(step, start=1, limit=4096):
    """Largest batch size in [start, limit] for which `step` fits: double, then bisect."""
    if not fits(step, start):
        raise RuntimeError(f"even a batch of {start} does not fit")
    good, bad = start, None
    while bad is None and good < limit:  # grow fast until the first failure
        size = min(2 * good, limit)
        if fits(step, size):
            good = size
        else:
            bad = size
    while bad is not None and bad - good > 1:  # the answer lies in [good, bad)
        mid = (good + bad) // 2
        if fits(step, mid):
            good = mid
        else:
            bad = mid
    return good


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
initial_state = {k: v.clone() for k, v in model.state_dict().items()}
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def train_step(batch_size):
    """One full training step (forward, backward, optimizer) on a random batch."""
    optimizer.zero_grad(set_to_none=True)  # also drops gradients left by a failed probe
    x = torch.randn(batch_size, 64, device=device)
    y = torch.randint(0, 10, (batch_size,), device=device)
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()


# On a GPU this probes real memory; on CPU nothing runs out, so the search stops at `limit`.
batch_size = find_max_batch_size(train_step, limit=4096 if device == "cuda" else 64)
# The probes trained on random data: restore the weights and start a fresh optimizer.
model.load_state_dict(initial_state)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
print(f"largest batch that fits: {batch_size}")
