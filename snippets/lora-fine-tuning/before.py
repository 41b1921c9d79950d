# Fine-tune with LoRA: a frozen bf16 base, fp32 adapters, an adapter-only optimizer and checkpoint, then merge (before)
# Generated from tips/lora-fine-tuning.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/lora-fine-tuning/before.py
import io

import torch
import torch.nn.functional as F
from torch import nn

VOCAB, WIDTH = 64, 32


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(WIDTH)
        self.up, self.down = nn.Linear(WIDTH, 4 * WIDTH), nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(2))
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x.flatten(0, 1))


def pretrained_weights():
    torch.manual_seed(0)  # stands in for the downloaded bf16 checkpoint
    return {k: v.to(torch.bfloat16) for k, v in Model().state_dict().items()}


def batch(step):
    g = torch.Generator().manual_seed(step)
    tokens = torch.randint(0, VOCAB, (8, 16), generator=g)
    return tokens, (tokens * 7 + 3) % VOCAB  # a task the base model does not know


model = Model()
model.load_state_dict(pretrained_weights())  # copied into fp32: every weight is trained
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
for step in range(10):
    tokens, targets = batch(step)
    F.cross_entropy(model(tokens), targets.flatten()).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
checkpoint = io.BytesIO()  # a file in a real run
torch.save(model.state_dict(), checkpoint)  # the whole model again, for every fine-tuned task
