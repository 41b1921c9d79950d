# Keep the matmuls, recompute the rest with selective activation checkpointing (after)
# Generated from tips/selective-activation-checkpointing.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/selective-activation-checkpointing/after.py
import functools

import torch
from torch import nn
from torch.utils.checkpoint import (
    CheckpointPolicy,
    checkpoint,
    create_selective_checkpoint_contexts,
)

device = "cuda" if torch.cuda.is_available() else "cpu"

# Keep what is expensive to redo (matrix multiplications); recompute the cheap pointwise
# work (LayerNorm, GELU, additions) during backward.
aten = torch.ops.aten
SAVE = {aten.mm.default, aten.addmm.default, aten.bmm.default}


def policy(ctx, op, *args, **kwargs):
    return CheckpointPolicy.MUST_SAVE if op in SAVE else CheckpointPolicy.PREFER_RECOMPUTE


selective = functools.partial(create_selective_checkpoint_contexts, policy)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


class Net(nn.Module):
    def __init__(self, width=64, depth=4, checkpointing="selective"):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, 1)
        self.checkpointing = checkpointing  # "none", "full" or "selective"

    def forward(self, x):
        for block in self.blocks:
            if self.checkpointing == "none" or not torch.is_grad_enabled():
                x = block(x)
            elif self.checkpointing == "full":  # keep the input, redo the whole block
                x = checkpoint(block, x, use_reentrant=False)
            else:  # the policy decides op by op what to keep
                x = checkpoint(block, x, use_reentrant=False, context_fn=selective)
        return self.head(x)


torch.manual_seed(0)
model = Net().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(32, 64, device=device)
y = torch.randn(32, 1, device=device)
for _ in range(3):
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
