# Backpropagate a non-scalar output with a vector-Jacobian product (before)
# Generated from tips/autograd-vector-jacobian.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/autograd-vector-jacobian/before.py
import torch

torch.manual_seed(0)
A = torch.randn(3, 4)
x = torch.randn(4, requires_grad=True)
y = A @ torch.tanh(x)  # a vector output, shape (3,)
v = torch.tensor([1.0, -2.0, 0.5])  # e.g. dL/dy from a later stage

# Build the full Jacobian, one backward pass per output, then multiply.
rows = []
for i in range(y.shape[0]):
    (row,) = torch.autograd.grad(y[i], x, retain_graph=True)
    rows.append(row)
jacobian = torch.stack(rows)  # (3, 4)
vjp = v @ jacobian
