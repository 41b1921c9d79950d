# Pack variable-length sequences instead of padding them to the longest (before)
# Generated from tips/sequence-packing.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/sequence-packing/before.py
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


torch.manual_seed(0)
model = Block().to(device)
lengths = torch.randint(5, 49, (6,)).tolist()
sequences = [torch.randint(0, VOCAB, (n,), device=device) for n in lengths]

# Pad every sequence to the longest; a causal + key-padding mask hides the padding.
tokens = nn.utils.rnn.pad_sequence(sequences, batch_first=True)  # (batch, longest)
longest = tokens.shape[1]
positions = torch.arange(longest, device=device).expand_as(tokens)
real = torch.arange(longest, device=device) < torch.tensor(lengths, device=device)[:, None]
mask = torch.ones(longest, longest, dtype=torch.bool, device=device).tril() & real[:, None, None, :]


def padded_attention(q, k, v):
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (batch, heads, longest, head_dim)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2)


def step():
    return model(tokens, positions, padded_attention)


out = step()
outputs = [o[:n] for o, n in zip(out, lengths, strict=True)]  # drop the padded positions
