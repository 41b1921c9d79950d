# Pack variable-length sequences instead of padding them to the longest (after)
# Generated from tips/sequence-packing.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/sequence-packing/after.py
import itertools

import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
VOCAB, DIM, HEADS, MAX_POS = 1000, 32, 4, 512


class Block(nn.Module):
    """Embeddings, one causal self-attention layer and an MLP; `attend` does the attention."""

    def __init__(self):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, DIM), nn.Embedding(MAX_POS, DIM)
        self.qkv, self.proj = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))

    def forward(self, tokens, positions, attend):
        x = self.tok(tokens) + self.pos(positions)
        q, k, v = self.qkv(x).unflatten(-1, (3, HEADS, DIM // HEADS)).unbind(-3)
        x = x + self.proj(attend(q, k, v).flatten(-2))  # q, k, v: (..., tokens, heads, head_dim)
        return x + self.mlp(x)


def attention_nested(q, k, v, offsets, lengths, causal=True):
    """One variable-length kernel for all sequences; `offsets` are its cu_seqlens."""
    q, k, v = (
        torch.nested.nested_tensor_from_jagged(  # a view of the packed buffer
            t.contiguous(), offsets, min_seqlen=min(lengths), max_seqlen=max(lengths)
        ).transpose(1, 2)  # (batch, heads, ragged tokens, head_dim)
        for t in (q, k, v)
    )
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return out.transpose(1, 2).values()  # back to (tokens, heads, head_dim)


def attention_per_sequence(q, k, v, offsets, lengths, causal=True):
    """CPU path: jagged SDPA has only a slow fallback there; one dense call per sequence."""
    q, k, v = (t.transpose(0, 1) for t in (q, k, v))  # (heads, tokens, head_dim)
    out = [
        F.scaled_dot_product_attention(q[None, :, s:e], k[None, :, s:e], v[None, :, s:e],
                                       is_causal=causal)[0]
        for s, e in itertools.pairwise([0, *itertools.accumulate(lengths)])
    ]
    return torch.cat(out, dim=1).transpose(0, 1)


packed_attention = attention_nested if device == "cuda" else attention_per_sequence

torch.manual_seed(0)
model = Block().to(device)
lengths = torch.randint(5, 49, (6,)).tolist()
sequences = [torch.randint(0, VOCAB, (n,), device=device) for n in lengths]

# Pack: one row of real tokens; the boundaries as cumulative offsets (cu_seqlens).
tokens = torch.cat(sequences)  # (sum(lengths),)
offsets = torch.tensor([0, *itertools.accumulate(lengths)], device=device)
seq_id = torch.repeat_interleave(torch.arange(len(lengths), device=device), offsets.diff())
positions = torch.arange(len(tokens), device=device) - offsets[seq_id]  # restart at 0


def step():
    return model(tokens, positions, lambda q, k, v: packed_attention(q, k, v, offsets, lengths))


out = step()
outputs = list(out.split(lengths))  # one (length, DIM) output per sequence
