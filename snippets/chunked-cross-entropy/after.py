# Compute a large-vocabulary loss with chunked cross-entropy (F.linear_cross_entropy) (after)
# Generated from tips/chunked-cross-entropy.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/chunked-cross-entropy/after.py
import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if device == "cuda" else torch.float32
batch, seq_len, d_model, vocab = 8, 256, 64, 8192


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.body = nn.Sequential(nn.Linear(d_model, d_model), nn.GELU())
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, tokens):
        return self.body(self.embed(tokens))  # hidden states (batch, seq_len, d_model)


# Head and loss in one call, 256 tokens at a time: only one chunk's logits (256 x vocab,
# in fp32) exist at once. LinearCrossEntropyOptions() without a size picks one from the shapes.
chunked = nn.LinearCrossEntropyOptions(batch_chunk_size=256)


def loss_fn(model, inputs, targets):
    hidden = model(inputs).flatten(0, 1)  # (tokens, d_model)
    return F.linear_cross_entropy(hidden, model.head.weight, targets.flatten(), options=chunked)


torch.manual_seed(0)
# bf16 weights keep the example short; a long run keeps fp32 master weights for AdamW (autocast,
# or FSDP2's MixedPrecisionPolicy): updates below bf16's spacing are lost (memory-lean-optimizers).
model = TinyLM().to(device, dtype)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
tokens = torch.randint(vocab, (batch, seq_len + 1), device=device)
inputs, targets = tokens[:, :-1], tokens[:, 1:]
for _ in range(3):
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model, inputs, targets)
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")
