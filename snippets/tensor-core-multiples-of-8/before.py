# Make layer sizes, vocabularies and batch sizes multiples of 8 (before)
# Generated from tips/tensor-core-multiples-of-8.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/tensor-core-multiples-of-8/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
vocab_size = 1003  # fixed by the tokenizer
hidden = 100
batch = 30

torch.manual_seed(0)
embed = nn.Embedding(vocab_size, hidden).to(device)
head = nn.Linear(hidden, vocab_size).to(device)  # a (30 x 100) @ (100 x 1003) GEMM
tokens = torch.randint(0, vocab_size, (batch,), device=device)
targets = torch.randint(0, vocab_size, (batch,), device=device)
loss = nn.functional.cross_entropy(head(embed(tokens)), targets)
loss.backward()
