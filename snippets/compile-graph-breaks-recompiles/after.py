# Find torch.compile graph breaks and recompiles with TORCH_LOGS, explain() and fullgraph=True (after)
# Generated from tips/compile-graph-breaks-recompiles.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/compile-graph-breaks-recompiles/after.py
import torch


@torch.compile(fullgraph=True)  # a graph break would raise here
def step(x, w):
    return torch.tanh(x @ w)


@torch.compile(fullgraph=True)
def normalize(x):
    norm = x.norm()
    return torch.where(norm > 1, x / norm, x)  # the branch is now data, not Python control flow


def rollout(x, w, n_steps):
    for _ in range(n_steps):  # the loop stays in Python: n_steps never reaches the compiler
        x = step(x, w)
    return normalize(x)


compiled = rollout
torch.manual_seed(0)
x = torch.randn(8, 16)
w = torch.randn(16, 16) / 4
calls = [(x, w, n_steps) for n_steps in range(1, 13)]
outputs = [compiled(*args) for args in calls]

# Changing shapes: with dynamic=None the first call compiles for its exact shape, the
# first change compiles once more with a symbolic batch size, which serves all later ones.
scale = torch.compile(lambda t: t * 2 + 1)
for batch in (4, 8, 16, 32):
    scale(torch.randn(batch, 16))
