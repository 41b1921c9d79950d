# Count total and trainable parameters over model.parameters() (after)
# Generated from tips/count-parameters.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/count-parameters/after.py
from torch import nn
from torch.distributed.tensor import DTensor


class TinyLM(nn.Module):
    def __init__(self, vocab=50, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)
        self.decoder = nn.Linear(dim, vocab, bias=False)
        self.decoder.weight = self.embed.weight  # tied: one tensor, two modules


def numel_on_this_rank(p):
    """Elements this process stores. Under FSDP2 (fully_shard) and tensor parallelism p is
    a DTensor: p.numel() is the GLOBAL size, p.to_local() is this rank's shard."""
    return p.to_local().numel() if isinstance(p, DTensor) else p.numel()


model = TinyLM()
model.embed.requires_grad_(False)  # frozen pretrained embeddings

# parameters() yields each tensor once, however many modules share it.
total = sum(p.numel() for p in model.parameters())
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
per_name = {name: p.numel() for name, p in model.named_parameters()}  # also deduplicated
local = sum(numel_on_this_rank(p) for p in model.parameters())  # == total when unsharded
print(f"{total:,} parameters, {trainable:,} trainable, {local:,} stored here")
