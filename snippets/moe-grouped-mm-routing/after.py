# MoE essentials: top-k routing, experts in one grouped matmul (F.grouped_mm), and a load-balancing loss (after)
# Generated from tips/moe-grouped-mm-routing.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/moe-grouped-mm-routing/after.py
import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if device == "cuda" else torch.float32  # grouped_mm's CUDA kernel: bf16


class MoE(nn.Module):
    """Top-k token-choice routing, all experts in one grouped matmul, and the balancing loss."""

    def __init__(self, dim, hidden, num_experts, top_k):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.w_in = nn.Parameter(torch.randn(num_experts, dim, hidden) / dim**0.5)
        self.w_out = nn.Parameter(torch.randn(num_experts, hidden, dim) / hidden**0.5)

    def forward(self, x):  # x: (tokens, dim)
        probs = self.router(x).float().softmax(dim=-1)  # (tokens, experts)
        weights, chosen = probs.topk(self.top_k, dim=-1)  # each token picks its k experts
        chosen = chosen.flatten()  # (tokens * k,) one row per (token, expert) pair
        order = chosen.argsort(stable=True)  # rows grouped by expert
        token = order // self.top_k  # the token each grouped row comes from
        counts = torch.zeros(self.num_experts, dtype=torch.int64, device=x.device)
        counts.scatter_add_(0, chosen, torch.ones_like(chosen))  # tokens per expert, no host sync
        offsets = counts.cumsum(0).to(torch.int32)  # where each expert's rows end
        h = F.grouped_mm(x[token], self.w_in, offs=offsets)  # every expert's matmul in one call
        h = F.grouped_mm(F.gelu(h), self.w_out, offs=offsets)
        h = h * weights.flatten()[order, None].to(h.dtype)
        out = torch.zeros_like(x).index_add_(0, token, h)  # back to token order, k experts summed
        # Load balancing (Switch Transformer): E * sum_i f_i * P_i, with f_i the share of the
        # routed rows and P_i the mean router probability of expert i. 1.0 when balanced.
        share = counts.float() / chosen.numel()
        aux_loss = self.num_experts * (share * probs.mean(dim=0)).sum()
        return out, aux_loss, counts


torch.manual_seed(0)
# bf16 weights keep the example short; a long run keeps fp32 master weights for AdamW (autocast,
# or FSDP2's MixedPrecisionPolicy): updates below bf16's spacing are lost (memory-lean-optimizers).
moe = MoE(dim=64, hidden=128, num_experts=8, top_k=2).to(device, dtype)
optimizer = torch.optim.AdamW(moe.parameters(), lr=1e-3)
x = torch.randn(512, 64, device=device, dtype=dtype)
target = torch.randn(512, 64, device=device, dtype=dtype)
for _ in range(5):
    optimizer.zero_grad(set_to_none=True)
    out, aux_loss, counts = moe(x)
    loss = F.mse_loss(out.float(), target.float()) + 0.01 * aux_loss
    loss.backward()
    optimizer.step()
print(f"tokens per expert {counts.tolist()}, balancing loss {aux_loss.item():.3f}")
