# Count total and trainable parameters over model.parameters() (before)
# Generated from tips/count-parameters.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/count-parameters/before.py
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

# Per-layer table: every module's own parameters, then the grand total.
per_layer = {
    name: sum(p.numel() for p in module.parameters(recurse=False))
    for name, module in model.named_modules()
}
total = sum(per_layer.values())
print(per_layer, total)
