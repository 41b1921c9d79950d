# Write document, sliding-window and soft-capped attention with FlexAttention block masks (after)
# Generated from tips/flex-attention-block-masks.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/flex-attention-block-masks/after.py
import torch
from torch import nn
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

device = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if device == "cuda" else torch.float32
train = device == "cuda"  # torch 2.13 has no FlexAttention backward on CPU: forward only there
batch, seq_len, dim, heads = 2, 512, 128, 4
WINDOW = 128  # sliding window: attend to the last 128 positions only
SOFTCAP = 20.0  # tanh soft-capping of the scores (Gemma 2)


def document_ids(lengths_per_row):
    """Packed rows: for each position, the index of the document it belongs to."""
    rows = [torch.repeat_interleave(torch.arange(len(r)), torch.tensor(r)) for r in lengths_per_row]
    return torch.stack(rows).to(device)


def causal_document_window(doc):
    def mask_mod(b, h, q_idx, kv_idx):  # True where the query may attend to the key
        same_doc = doc[b, q_idx] == doc[b, kv_idx]
        return same_doc & (q_idx >= kv_idx) & (q_idx - kv_idx < WINDOW)

    return mask_mod


def softcap(score, b, h, q_idx, kv_idx):  # applied to every score before the softmax
    return SOFTCAP * torch.tanh(score / SOFTCAP)


attention = torch.compile(flex_attention)  # compiled: one fused kernel that skips empty blocks


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, block_mask):
        q, k, v = self.qkv(x).unflatten(-1, (3, heads, -1)).permute(2, 0, 3, 1, 4)
        y = attention(q, k, v, score_mod=softcap, block_mask=block_mask)
        return self.out(y.transpose(1, 2).flatten(2))


torch.manual_seed(0)
# bf16 weights keep the example short; a long run keeps fp32 master weights for AdamW (autocast,
# or FSDP2's MixedPrecisionPolicy): updates below bf16's spacing are lost (memory-lean-optimizers).
layers = nn.ModuleList(SelfAttention() for _ in range(2)).to(device, dtype)
optimizer = torch.optim.AdamW(layers.parameters(), lr=1e-3)
packings = [[[200, 150, 162], [512]], [[100, 412], [300, 212]]]  # documents per row, per batch
for lengths in packings:
    x = torch.randn(batch, seq_len, dim, device=device, dtype=dtype)
    # One block mask per batch, built once and shared by every layer.
    block_mask = create_block_mask(
        causal_document_window(document_ids(lengths)), batch, None, seq_len, seq_len, device=device
    )
    with torch.set_grad_enabled(train):
        h = x
        for layer in layers:
            h = h + layer(h, block_mask)
    if train:
        optimizer.zero_grad(set_to_none=True)
        h.square().mean().backward()
        optimizer.step()
print(f"{len(layers)} layers, one block mask per batch, {block_mask.sparsity():.0f}% of blocks skipped")
