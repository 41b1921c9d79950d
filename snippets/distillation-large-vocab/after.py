# Distil a large-vocabulary model with a temperature KL scaled by T², computed in chunks, and a teacher outside autograd (after)
# Generated from tips/distillation-large-vocab.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/distillation-large-vocab/after.py
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

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


def kd_chunk(s_hidden, t_hidden, s_head, t_head, temperature):
    """Sum over the chunk's tokens of KL(teacher || student) at `temperature`."""
    log_q = F.log_softmax(F.linear(s_hidden, s_head).float() / temperature, dim=-1)
    with torch.no_grad():
        log_p = F.log_softmax(F.linear(t_hidden, t_head).float() / temperature, dim=-1)
    return F.kl_div(log_q, log_p, log_target=True, reduction="sum")


def distill_loss(s_hidden, t_hidden, student_head, teacher_head, temperature=T, chunk=64):
    """T² · KL averaged over tokens, computed `chunk` tokens at a time: the (tokens, vocab)
    logits of teacher and student exist one chunk at a time, and are recomputed in backward."""
    s_hidden, t_hidden = s_hidden.flatten(0, 1), t_hidden.flatten(0, 1)
    total = sum(
        checkpoint(kd_chunk, s, t, student_head.weight, teacher_head.weight, temperature, use_reentrant=False)
        for s, t in zip(s_hidden.split(chunk), t_hidden.split(chunk), strict=True)
    )
    return temperature**2 * total / len(s_hidden)  # T²: the gradient keeps its scale as T changes


def topk_distill_loss(student_logits, top_values, top_indices, temperature=T):
    """Against a teacher stored offline as its top-k logits per token, renormalised over them."""
    log_q = F.log_softmax(student_logits.float() / temperature, dim=-1).gather(-1, top_indices)
    log_p = F.log_softmax(top_values.float() / temperature, dim=-1)
    return temperature**2 * (log_p.exp() * (log_p - log_q)).sum(-1).mean()


torch.manual_seed(0)
teacher, student = LM(width=64, layers=3), LM(width=32, layers=1)
nn.init.normal_(teacher.head.weight, std=8.0)  # stands in for a trained, confident teacher
teacher.eval().requires_grad_(False)  # fixed targets: no dropout, no gradients, no optimizer
optimizer = torch.optim.AdamW(student.parameters(), lr=1e-3)
for step in range(5):
    tokens = torch.randint(0, VOCAB, (8, SEQ), generator=torch.Generator().manual_seed(step))
    with torch.no_grad():  # no graph, no activations kept; not inference_mode (see the caveats)
        t_hidden = teacher.hidden(tokens)
    loss = distill_loss(student.hidden(tokens), t_hidden, student.head, teacher.head)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
