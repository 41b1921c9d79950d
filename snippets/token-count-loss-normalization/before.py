# Under gradient accumulation, divide the summed token loss by the token count of the whole batch (before)
# Generated from tips/token-count-loss-normalization.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/token-count-loss-normalization/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
IGNORE = -100  # label of padding positions (and of prompt tokens in fine-tuning)
VOCAB = 16


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Embedding(VOCAB, 32), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, VOCAB)
    ).to(device)


def micro_batch(valid_lengths, seq_len=16):
    """Sequences padded to seq_len; labels past each sequence's length are IGNORE."""
    tokens = torch.randint(VOCAB, (len(valid_lengths), seq_len), device=device)
    labels = torch.randint(VOCAB, (len(valid_lengths), seq_len), device=device)
    for row, n in enumerate(valid_lengths):
        labels[row, n:] = IGNORE
    return tokens, labels


def accumulate(model, micro_batches):
    """Backward over all micro-batches of one optimizer step; returns the mean loss."""
    total = 0.0
    for tokens, labels in micro_batches:
        logits = model(tokens)
        # Mean over this micro-batch's valid tokens, then averaged over micro-batches.
        loss = nn.functional.cross_entropy(
            logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE
        )
        (loss / len(micro_batches)).backward()
        total = total + loss.detach()
    return total / len(micro_batches)


torch.manual_seed(0)
model = make_model()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
# Three micro-batches with 8, 32 and 12 valid tokens: short and long sequences mixed.
micro_batches = [micro_batch([3, 5]), micro_batch([16, 16]), micro_batch([10, 2])]
for _ in range(3):
    optimizer.zero_grad(set_to_none=True)
    loss = accumulate(model, micro_batches)
    optimizer.step()
print(f"loss {loss.item():.4f}")
