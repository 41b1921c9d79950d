# Compute attention with F.scaled_dot_product_attention, not softmax(QKᵀ)V by hand (before)
# Generated from tips/sdpa-attention.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/sdpa-attention/before.py
import math

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if device == "cuda" else torch.float32
torch.manual_seed(0)
batch, heads, seq_len, head_dim = 2, 4, 256, 32
q, k, v = (
    torch.randn(batch, heads, seq_len, head_dim, device=device, dtype=dtype, requires_grad=True)
    for _ in range(3)
)
causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()


def attention(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (batch, heads, L, L)
    scores = scores.masked_fill(~causal, float("-inf"))
    weights = scores.softmax(dim=-1)  # the L x L probabilities are kept for backward
    return weights @ v


out = attention(q, k, v)
out.sum().backward()
