# Cap a compiled model's activation memory with torch._functorch.config.activation_memory_budget (after)
# Generated from tips/compile-activation-memory-budget.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/compile-activation-memory-budget/after.py
import torch
import torch._functorch.config
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"

# Keep at most half of the activation memory the compiled graph would save by default; the
# partitioner picks the cheapest ops to recompute in backward. Set it once, before the first
# compiled call: it is read when a graph is compiled.
torch._functorch.config.activation_memory_budget = 0.5


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


class Net(nn.Module):
    def __init__(self, width=64, depth=2):
        super().__init__()
        self.blocks = nn.Sequential(*(Block(width) for _ in range(depth)))
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        return self.head(self.blocks(x))


torch.manual_seed(0)
model = Net().to(device)
model.compile()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(64, 64, device=device)
y = torch.randn(64, 1, device=device)
for _ in range(3):
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
