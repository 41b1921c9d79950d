# Freeze the set-up objects and schedule Python's garbage collector yourself (after)
# Generated from tips/gc-freeze-training-loop.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/gc-freeze-training-loop/after.py
import gc
import time

import torch
import torch.nn.functional as F
from torch import nn

# Set-up: a large graph of long-lived Python objects, such as per-sample metadata.
records = [{"path": f"images/{i:07d}.jpg", "label": i % 10, "box": [i % 64, i % 48, 32, 32]}
           for i in range(100_000)]
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
history = []  # per-step logs that outlive the step


def train_step(step):
    batch = [records[i] for i in torch.randint(len(records), (32,)).tolist()]
    x = torch.tensor([r["box"] for r in batch], dtype=torch.float32)
    y = torch.tensor([r["label"] for r in batch])
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    history.append({"step": step, "loss": loss.item(), "samples": [dict(r) for r in batch]})


gc.collect()  # clear the set-up's garbage once
gc.freeze()  # every object alive now moves to the permanent generation: never scanned again
gc.disable()  # no automatic collections inside training steps...
GC_EVERY = 100  # ...a manual one every GC_EVERY steps, at the same step on every rank

# Record every collection during the loop: (generation, seconds).
collections, started = [], []


def watch(phase, info):
    if phase == "start":
        started.append(time.perf_counter())
    else:
        collections.append((info["generation"], time.perf_counter() - started.pop()))


gc.callbacks.append(watch)
for step in range(1, 301):
    train_step(step)
    if step % GC_EVERY == 0:
        gc.collect()  # a full collection, but it walks only the objects made since the freeze
gc.callbacks.remove(watch)
