# Drop Variable and .data; plain tensors carry requires_grad (after)
# Generated from tips/variable-is-gone.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/variable-is-gone/after.py
import torch

torch.manual_seed(0)
X = torch.randn(32, 3)
y = X @ torch.tensor([[2.0], [-1.0], [0.5]]) + 0.1 * torch.randn(32, 1)

w = torch.zeros(3, 1, requires_grad=True)  # a plain tensor: nothing to wrap
lr = 0.1
for _ in range(50):
    loss = ((X @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():  # change w without recording the change in the graph
        w -= lr * w.grad
    w.grad = None
last_loss = loss.detach()  # graph-free, and autograd still guards it

probs = (X @ w).sigmoid()  # say, probabilities for a report
report = probs.detach()  # graph-free, same memory, same version counter
