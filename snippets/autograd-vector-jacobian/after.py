# Backpropagate a non-scalar output with a vector-Jacobian product (after)
# Generated from tips/autograd-vector-jacobian.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/autograd-vector-jacobian/after.py
import torch

torch.manual_seed(0)
A = torch.randn(3, 4)
x = torch.randn(4, requires_grad=True)
y = A @ torch.tanh(x)  # a vector output, shape (3,)
v = torch.tensor([1.0, -2.0, 0.5])  # e.g. dL/dy from a later stage

print(y.grad_fn)  # the operation that produced y, e.g. <MvBackward0 ...>

# One backward pass computes v^T J directly.
(vjp,) = torch.autograd.grad(y, x, grad_outputs=v, retain_graph=True)
y.backward(gradient=v)  # the same product, accumulated into x.grad
