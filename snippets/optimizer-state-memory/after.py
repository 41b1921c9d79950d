# Budget for the optimizer state, not just the weights (after)
# Generated from tips/optimizer-state-memory.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/optimizer-state-memory/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def tensor_bytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def state_bytes(optimizer):
    """Bytes of the per-parameter buffers an optimizer keeps between steps."""
    return tensor_bytes(
        value
        for state in optimizer.state.values()
        for key, value in state.items()
        if torch.is_tensor(value) and key != "step"  # `step` is a scalar counter
    )


def state_ratio(make_optimizer):
    """Optimizer state after one step, as a multiple of the parameter memory."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    optimizer = make_optimizer(model.parameters())
    empty_before_step = state_bytes(optimizer) == 0
    model(torch.randn(32, 256, device=device)).square().mean().backward()
    optimizer.step()  # the state is created here, at the first step
    return state_bytes(optimizer) / tensor_bytes(model.parameters()), empty_before_step


optimizers = {
    "SGD": lambda p: torch.optim.SGD(p, lr=0.1),
    "SGD momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    "RMSprop": lambda p: torch.optim.RMSprop(p, lr=0.01),
    "Adam": lambda p: torch.optim.Adam(p, lr=1e-3),
    "AdamW": lambda p: torch.optim.AdamW(p, lr=1e-3),
    "Adam amsgrad": lambda p: torch.optim.Adam(p, lr=1e-3, amsgrad=True),
}
ratios, lazy = {}, {}
for name, make in optimizers.items():
    ratios[name], lazy[name] = state_ratio(make)
    print(f"{name:<13} state = {ratios[name]:.0f} x the parameters")
