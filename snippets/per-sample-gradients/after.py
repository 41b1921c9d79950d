# Get per-sample gradients with `torch.func` (`vmap(grad(...))` over `functional_call`) for DP-SGD clipping, influence and the gradient noise scale (after)
# Generated from tips/per-sample-gradients.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/per-sample-gradients/after.py
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, vmap

CLIP, NOISE = 1.0, 0.5  # DP-SGD: bound on each sample's gradient norm, noise multiplier


def batch(step, size=32):
    g = torch.Generator().manual_seed(step)
    x = torch.randn(size, 20, generator=g)
    return x, (x[:, :10].argmax(1) + (torch.rand(size, generator=g) < 0.2).long()) % 10


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.Linear(64, 10))  # no BatchNorm, no dropout
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)


def sample_loss(params, x, y):
    """The loss of one sample as a function of the parameters."""
    return F.cross_entropy(functional_call(model, params, (x.unsqueeze(0),)), y.unsqueeze(0))


per_sample_grads = vmap(grad(sample_loss), in_dims=(None, 0, 0))  # B gradients in one pass


def flat(grads):
    return torch.cat([g.flatten(1) for g in grads.values()], dim=1)  # (batch, parameters)


def dp_sgd_step(x, y, generator):
    grads = per_sample_grads({k: v.detach() for k, v in model.named_parameters()}, x, y)
    scale = (CLIP / (flat(grads).norm(dim=1) + 1e-6)).clamp(max=1.0)  # each sample to norm <= C
    for name, p in model.named_parameters():
        clipped = torch.einsum("b,b...->...", scale, grads[name])
        noise = torch.normal(0.0, NOISE * CLIP, p.shape, generator=generator)
        p.grad = (clipped + noise) / len(x)
    optimizer.step()


def noise_scale(grads):
    """McCandlish et al.'s simple noise scale tr(Σ) / |G|²: the batch size where noise and
    signal in the gradient are equal; |G|² corrected for the noise in the batch mean."""
    g = flat(grads)
    trace = g.var(dim=0).sum()
    return (trace / (g.mean(0).square().sum() - trace / len(g))).item()


def influence(grads, x_val, y_val):
    """g_i · g_val: a step of size lr on sample i changes the validation loss by about
    -lr * g_i · g_val (the first-order term that TracIn-style influence sums up)."""
    params = {k: v.detach() for k, v in model.named_parameters()}
    g_val = torch.cat([g.flatten() for g in grad(sample_loss)(params, x_val, y_val).values()])
    return flat(grads) @ g_val


noise = torch.Generator().manual_seed(1)
for step in range(20):
    dp_sgd_step(*batch(step), noise)

x, y = batch(100, size=256)
grads = per_sample_grads({k: v.detach() for k, v in model.named_parameters()}, x, y)
print(f"simple noise scale: {noise_scale(grads):.0f} samples")
x_val, y_val = batch(200, size=1)
scores = influence(grads, x_val[0], y_val[0])
print(f"most helpful training sample: {scores.argmax().item()}, most harmful: {scores.argmin().item()}")
