# Write document, sliding-window and soft-capped attention with FlexAttention block masks (before)
# Generated from tips/flex-attention-block-masks.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/flex-attention-block-masks/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if device == "cuda" else torch.float32
batch, seq_len, dim, heads = 2, 512, 128, 4
WINDOW = 128  # sliding window: attend to the last 128 positions only
SOFTCAP = 20.0  # tanh soft-capping of the scores (Gemma 2)


def document_ids(lengths_per_row):
    """Packed rows: for each position, the index of the document it belongs to."""
    rows = [torch.repeat_interleave(torch.arange(len(r)), torch.tensor(r)) for r in lengths_per_row]
    return torch.stack(rows).to(device)


def dense_mask(doc):
    """(batch, 1, L, L) booleans: causal, same document, within the window."""
    pos = torch.arange(seq_len, device=device)
    causal_window = (pos[:, None] >= pos[None, :]) & (pos[:, None] - pos[None, :] < WINDOW)
    return ((doc[:, :, None] == doc[:, None, :]) & causal_window)[:, None]


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, mask):
        q, k, v = self.qkv(x).unflatten(-1, (3, heads, -1)).permute(2, 0, 3, 1, 4)
        # SDPA has no hook for soft-capping, so the scores are written out by hand.
        scores = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5  # (batch, heads, L, L)
        scores = SOFTCAP * torch.tanh(scores / SOFTCAP)
        y = scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v
        return self.out(y.transpose(1, 2).flatten(2))


torch.manual_seed(0)
# bf16 weights keep the example short; a long run keeps fp32 master weights for AdamW (autocast,
# or FSDP2's MixedPrecisionPolicy): updates below bf16's spacing are lost (memory-lean-optimizers).
layers = nn.ModuleList(SelfAttention() for _ in range(2)).to(device, dtype)
optimizer = torch.optim.AdamW(layers.parameters(), lr=1e-3)
packings = [[[200, 150, 162], [512]], [[100, 412], [300, 212]]]  # documents per row, per batch
for lengths in packings:
    x = torch.randn(batch, seq_len, dim, device=device, dtype=dtype)
    mask = dense_mask(document_ids(lengths))
    h = x
    for layer in layers:
        h = h + layer(h, mask)
    optimizer.zero_grad(set_to_none=True)
    h.square().mean().backward()
    optimizer.step()
print(f"mask of {mask.numel()} booleans, {mask.float().mean():.0%} of them True")
