# Prevent loss spikes in LLM pre-training: QK-norm, z-loss, AdamW β₂ = 0.95, depth-scaled residual init, no decay on embeddings (after)
# Generated from tips/loss-spike-prevention.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/loss-spike-prevention/after.py
import math

import torch
import torch.nn.functional as F
from torch import nn

VOCAB, WIDTH, HEADS, SEQ = 64, 32, 2, 16


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH, bias=False)
        self.proj = nn.Linear(WIDTH, WIDTH, bias=False)
        self.q_norm = nn.RMSNorm(WIDTH // HEADS)  # QK-norm: queries and keys have a fixed scale,
        self.k_norm = nn.RMSNorm(WIDTH // HEADS)  # so the attention logits cannot grow with W_q, W_k

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, WIDTH // HEADS).transpose(1, 3).unbind(2)
        y = F.scaled_dot_product_attention(self.q_norm(q), self.k_norm(k), v, is_causal=True)
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
        for name, p in self.named_parameters():
            if p.ndim == 2:  # GPT-2's init; the residual outputs scaled by 1/sqrt(2 * layers)
                residual = name.endswith(("attn.proj.weight", "down.weight"))
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * layers) if residual else 0.02)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def soft_cap(logits, cap):
    """Gemma 2's logit soft-capping: smooth, about the identity for |logits| << cap, never beyond ±cap."""
    return cap * torch.tanh(logits / cap)


def lm_loss(logits, targets, z_loss=1e-4, cap=None):
    logits = logits.float().flatten(0, 1)  # the softmax in fp32
    if cap is not None:
        logits = soft_cap(logits, cap)
    log_z = torch.logsumexp(logits, dim=-1)  # cross-entropy does not care where log Z sits:
    return F.cross_entropy(logits, targets.flatten()) + z_loss * log_z.square().mean()  # z-loss does


def batch(step):
    g = torch.Generator().manual_seed(step)
    tokens = torch.randint(0, 48, (8, SEQ + 1), generator=g)  # tokens 48-63 never occur: "rare" ones
    return tokens[:, :-1], tokens[:, 1:]


torch.manual_seed(0)
model = GPT()
# Decay the matrices of the blocks and the output layer; not the embedding, norms or biases.
decay = [p for n, p in model.named_parameters() if p.ndim == 2 and not n.startswith("embed.")]
no_decay = [p for n, p in model.named_parameters() if p.ndim < 2 or n.startswith("embed.")]
optimizer = torch.optim.AdamW(
    [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
    lr=3e-3, betas=(0.9, 0.95), eps=1e-8,  # beta2 = 0.95: the second moment follows recent gradients
)
for step in range(10):
    tokens, targets = batch(step)
    loss = lm_loss(model(tokens), targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
