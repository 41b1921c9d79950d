# Prevent loss spikes in LLM pre-training: QK-norm, z-loss, AdamW β₂ = 0.95, depth-scaled residual init, no decay on embeddings (before)
# Generated from tips/loss-spike-prevention.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/loss-spike-prevention/before.py
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, WIDTH, HEADS, SEQ = 64, 32, 2, 16


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH, bias=False)
        self.proj = nn.Linear(WIDTH, WIDTH, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, WIDTH // HEADS).transpose(1, 3).unbind(2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # logits grow with |q|·|k|
        return self.proj(y.transpose(1, 2).reshape(b, t, WIDTH))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.RMSNorm(WIDTH), nn.RMSNorm(WIDTH)
        self.attn = Attention()
        self.up, self.down = nn.Linear(WIDTH, 4 * WIDTH, bias=False), nn.Linear(4 * WIDTH, WIDTH, bias=False)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class GPT(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(layers))
        self.norm = nn.RMSNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB, bias=False)
        for p in self.parameters():
            if p.ndim == 2:
                nn.init.normal_(p, std=0.02)  # the same for every layer, however deep the model

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def batch(step):
    g = torch.Generator().manual_seed(step)
    tokens = torch.randint(0, 48, (8, SEQ + 1), generator=g)  # tokens 48-63 never occur: "rare" ones
    return tokens[:, :-1], tokens[:, 1:]


torch.manual_seed(0)
model = GPT()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)  # betas=(0.9, 0.999)
for step in range(10):
    tokens, targets = batch(step)
    loss = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
