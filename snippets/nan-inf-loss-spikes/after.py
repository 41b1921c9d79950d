# Catch NaN/Inf losses and loss spikes on the device, and skip the bad batch (after)
# Generated from tips/nan-inf-loss-spikes.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/nan-inf-loss-spikes/after.py
import io
import math

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
CHECK_EVERY = 5  # steps between host syncs
MAX_NORM = 1.0


def make_batches(steps, bad_step=None):
    g = torch.Generator().manual_seed(0)
    batches = [(torch.randn(32, 16, generator=g), torch.randn(32, 1, generator=g)) for _ in range(steps)]
    if bad_step is not None:
        batches[bad_step][0][3, 5] = float("inf")  # one corrupt sample
    return [(x.to(device), y.to(device)) for x, y in batches]


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, fused=True)
params = [p for p in model.parameters() if p.requires_grad]
names = [n for n, p in model.named_parameters() if p.requires_grad]


def train_window(batches):
    """Train on a few batches without a single host sync; return the per-step verdicts."""
    ok = torch.ones(len(batches), dtype=torch.bool, device=device)
    layer_norms = torch.zeros(len(batches), len(params), device=device)
    for i, (x, y) in enumerate(batches):
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        norms = torch.stack(torch._foreach_norm([p.grad for p in params]))  # one per parameter
        total = torch.linalg.vector_norm(norms)  # what clip_grad_norm_ returns
        nn.utils.clip_grads_with_norm_(params, MAX_NORM, total)
        ok[i] = torch.isfinite(loss) & torch.isfinite(total)
        layer_norms[i] = norms
        optimizer.step()
    return ok, layer_norms


def snapshot():  # the last known-good state (in a real run: the last checkpoint)
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    return buffer


def restore(buffer):
    buffer.seek(0)
    state = torch.load(buffer, map_location=device, weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])


batches = make_batches(20, bad_step=7)
skipped = []
for start in range(0, len(batches), CHECK_EVERY):
    window = list(enumerate(batches[start : start + CHECK_EVERY], start))
    good = snapshot()
    while True:
        ok, layer_norms = train_window([batch for _, batch in window])
        verdicts = ok.tolist()  # the one host sync of the window
        if all(verdicts):
            break
        # Later steps of the window failed only because this one poisoned the weights.
        first = verdicts.index(False)
        step, _ = window.pop(first)
        bad = [n for n, v in zip(names, layer_norms[first].tolist(), strict=True) if not math.isfinite(v)]
        print(f"step {step}: non-finite loss or gradient norm {bad}; skipping its batch")
        skipped.append(step)
        restore(good)  # back to the start of the window, then train it again without the batch
print(f"skipped steps {skipped}")
