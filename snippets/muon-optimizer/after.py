# Use Muon (torch.optim.Muon) for the hidden matrices and AdamW for the embedding, head, norms and biases (after)
# Generated from tips/muon-optimizer.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/muon-optimizer/after.py
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

# Muon for the 2-D weights of the hidden layers; AdamW for everything else: the embedding and
# the output head (2-D too, but not hidden layers), the norms and the biases.
hidden = [p for name, p in model.blocks.named_parameters() if p.ndim == 2]
hidden_ids = {id(p) for p in hidden}
rest = [p for p in model.parameters() if id(p) not in hidden_ids]
# match_rms_adamw scales Muon's step to AdamW's update size, so both share lr and weight decay.
muon = torch.optim.Muon(hidden, lr=1e-3, weight_decay=0.1, adjust_lr_fn="match_rms_adamw")
adamw = torch.optim.AdamW(rest, lr=1e-3, weight_decay=0.1)
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
    losses.append(loss.detach())  # stays on the device: no host sync per step
print(f"loss {losses[0].item():.3f} -> {losses[-1].item():.3f}")
