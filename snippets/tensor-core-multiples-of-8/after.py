# Make layer sizes, vocabularies and batch sizes multiples of 8 (after)
# Generated from tips/tensor-core-multiples-of-8.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/tensor-core-multiples-of-8/after.py
import torch
from torch import nn


def round_up(n: int, multiple: int = 8) -> int:
    """The smallest multiple of `multiple` that is >= n."""
    return -(-n // multiple) * multiple


device = "cuda" if torch.cuda.is_available() else "cpu"
vocab_size = 1003  # fixed by the tokenizer
padded_vocab = round_up(vocab_size)  # 1008: the size the layers are built with
hidden = round_up(100)  # 104: a width we choose ourselves
batch = round_up(30)  # 32

torch.manual_seed(0)
embed = nn.Embedding(padded_vocab, hidden).to(device)
head = nn.Linear(hidden, padded_vocab).to(device)  # a (32 x 104) @ (104 x 1008) GEMM
tokens = torch.randint(0, vocab_size, (batch,), device=device)
targets = torch.randint(0, vocab_size, (batch,), device=device)
logits = head(embed(tokens))[:, :vocab_size]  # drop the padding columns before the loss
loss = nn.functional.cross_entropy(logits, targets)
loss.backward()
