# Distil a large-vocabulary model with a temperature KL scaled by T², computed in chunks, and a teacher outside autograd (before)
# Generated from tips/distillation-large-vocab.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/distillation-large-vocab/before.py
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, SEQ, T = 512, 32, 2.0  # a real vocabulary is 32k-256k tokens


class LM(nn.Module):
    def __init__(self, width, layers):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.body = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Dropout(0.1)) for _ in range(layers)])
        self.head = nn.Linear(width, VOCAB, bias=False)

    def hidden(self, tokens):
        return self.body(self.embed(tokens))

    def forward(self, tokens):
        return self.head(self.hidden(tokens))


torch.manual_seed(0)
teacher, student = LM(width=64, layers=3), LM(width=32, layers=1)
nn.init.normal_(teacher.head.weight, std=8.0)  # stands in for a trained, confident teacher
optimizer = torch.optim.AdamW(student.parameters(), lr=1e-3)
for step in range(5):
    tokens = torch.randint(0, VOCAB, (8, SEQ), generator=torch.Generator().manual_seed(step))
    t_logits = teacher(tokens)  # a graph through the teacher, its activations kept, dropout on
    s_logits = student(tokens)  # (batch, seq, vocab) logits, plus their softmax copies below
    loss = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="mean")
    loss.backward()  # reaches the teacher's weights too
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
