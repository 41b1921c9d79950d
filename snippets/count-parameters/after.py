# Count total and trainable parameters over model.parameters() (after)
# Generated from tips/count-parameters.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/count-parameters/after.py
from torch import nn


class TinyLM(nn.Module):
    def __init__(self, vocab=50, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)
        self.decoder = nn.Linear(dim, vocab, bias=False)
        self.decoder.weight = self.embed.weight  # tied: one tensor, two modules


model = TinyLM()
model.embed.requires_grad_(False)  # frozen pretrained embeddings

# parameters() yields each tensor once, however many modules share it.
total = sum(p.numel() for p in model.parameters())
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
per_name = {name: p.numel() for name, p in model.named_parameters()}  # also deduplicated
print(f"{total:,} parameters, {trainable:,} trainable")
