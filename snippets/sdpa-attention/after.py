# Compute attention with F.scaled_dot_product_attention, not softmax(QKᵀ)V by hand (after)
# Generated from tips/sdpa-attention.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/sdpa-attention/after.py
import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if device == "cuda" else torch.float32
torch.manual_seed(0)
batch, heads, seq_len, head_dim = 2, 4, 256, 32
q, k, v = (
    torch.randn(batch, heads, seq_len, head_dim, device=device, dtype=dtype, requires_grad=True)
    for _ in range(3)
)


def attention(q, k, v):
    # is_causal=True instead of a boolean mask: the fused kernels skip the masked tiles.
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


out = attention(q, k, v)
out.sum().backward()
