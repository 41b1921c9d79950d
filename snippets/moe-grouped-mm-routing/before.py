# MoE essentials: top-k routing, experts in one grouped matmul (F.grouped_mm), and a load-balancing loss (before)
# Generated from tips/moe-grouped-mm-routing.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/moe-grouped-mm-routing/before.py
import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if device == "cuda" else torch.float32


class MoE(nn.Module):
    def __init__(self, dim, hidden, num_experts, top_k):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.w_in = nn.Parameter(torch.randn(num_experts, dim, hidden) / dim**0.5)
        self.w_out = nn.Parameter(torch.randn(num_experts, hidden, dim) / hidden**0.5)

    def forward(self, x):
        probs = self.router(x).float().softmax(dim=-1)
        weights, chosen = probs.topk(self.top_k, dim=-1)
        out = torch.zeros_like(x)
        for e in range(self.num_experts):  # one small matmul pair per expert
            rows, slot = (chosen == e).nonzero(as_tuple=True)  # data-dependent size: a host sync on GPU
            h = F.gelu(x[rows] @ self.w_in[e]) @ self.w_out[e]
            out.index_add_(0, rows, h * weights[rows, slot, None].to(h.dtype))
        return out  # and nothing keeps the router from sending most tokens to a few experts


torch.manual_seed(0)
# bf16 weights keep the example short; a long run keeps fp32 master weights for AdamW (autocast,
# or FSDP2's MixedPrecisionPolicy): updates below bf16's spacing are lost (memory-lean-optimizers).
moe = MoE(dim=64, hidden=128, num_experts=8, top_k=2).to(device, dtype)
optimizer = torch.optim.AdamW(moe.parameters(), lr=1e-3)
x = torch.randn(512, 64, device=device, dtype=dtype)
target = torch.randn(512, 64, device=device, dtype=dtype)
for _ in range(5):
    optimizer.zero_grad(set_to_none=True)
    loss = F.mse_loss(moe(x).float(), target.float())
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")
