# Find torch.compile graph breaks and recompiles with TORCH_LOGS, explain() and fullgraph=True (before)
# Generated from tips/compile-graph-breaks-recompiles.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/compile-graph-breaks-recompiles/before.py
import torch

# Same reports as running with TORCH_LOGS="graph_breaks,recompiles".
torch._logging.set_logs(graph_breaks=True, recompiles=True)

def rollout(x, w, n_steps):
    for _ in range(n_steps):  # range() needs a concrete int: each new n_steps is a new graph
        x = torch.tanh(x @ w)
    if x.norm() > 1:  # a Python `if` on a tensor value: graph break
        x = x / x.norm()
    return x


compiled = torch.compile(rollout)
torch.manual_seed(0)
x = torch.randn(8, 16)
w = torch.randn(16, 16) / 4
calls = [(x, w, n_steps) for n_steps in range(1, 13)]
outputs = [compiled(*args) for args in calls]
