# Use Muon (torch.optim.Muon) for the hidden matrices and AdamW for the embedding, head, norms and biases (before)
# Generated from tips/muon-optimizer.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/muon-optimizer/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
vocab, dim, depth = 512, 64, 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.Sequential(*(Block() for _ in range(depth)))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        return self.head(self.norm(self.blocks(self.embed(tokens))))


torch.manual_seed(0)
model = TinyLM().to(device)

# Split by shape only: every matrix goes to Muon, vectors to AdamW.
matrices = [p for p in model.parameters() if p.ndim == 2]
vectors = [p for p in model.parameters() if p.ndim != 2]
muon = torch.optim.Muon(matrices, lr=1e-3, weight_decay=0.1, adjust_lr_fn="match_rms_adamw")
adamw = torch.optim.AdamW(vectors, lr=1e-3, weight_decay=0.1)
optimizers = [muon, adamw]

tokens = torch.randint(vocab, (16, 65), device=device)
inputs, targets = tokens[:, :-1], tokens[:, 1:]
losses = []
for _ in range(20):
    for opt in optimizers:
        opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(inputs).flatten(0, 1), targets.flatten())
    loss.backward()
    for opt in optimizers:
        opt.step()
    losses.append(loss.item())
print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")
