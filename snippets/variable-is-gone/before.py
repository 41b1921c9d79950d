# Drop Variable and .data; plain tensors carry requires_grad (before)
# Generated from tips/variable-is-gone.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/variable-is-gone/before.py
import torch

torch.manual_seed(0)
X = torch.randn(32, 3)
y = X @ torch.tensor([[2.0], [-1.0], [0.5]]) + 0.1 * torch.randn(32, 1)

w = torch.zeros(3, 1, requires_grad=True)
lr = 0.1
for _ in range(50):
    loss = ((X @ w - y) ** 2).mean()
    loss.backward()
    w.data -= lr * w.grad.data  # pre-0.4 habit: reach around autograd with .data
    w.grad.data.zero_()
last_loss = loss.data  # and again for logging

probs = (X @ w).sigmoid()  # say, probabilities for a report
report = probs.data  # an untracked alias of the same memory
