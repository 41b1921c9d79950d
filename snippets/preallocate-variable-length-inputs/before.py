# Warm up the allocator at the maximum sequence length before training on variable-length inputs (before)
# Generated from tips/preallocate-variable-length-inputs.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/preallocate-variable-length-inputs/before.py
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

device = "cuda" if torch.cuda.is_available() else "cpu"
MAX_LEN = 64  # longest sequence used for training; longer ones are truncated
BATCH_SIZE = 8
VOCAB = 1000


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 64, padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))
        self.head = nn.Linear(64, 2)

    def forward(self, tokens):
        mask = (tokens != 0).unsqueeze(-1)
        hidden = self.mlp(self.embed(tokens)) * mask
        return self.head(hidden.sum(1) / mask.sum(1).clamp(min=1))


def collate(samples):
    """Pad a batch to its longest sequence, never beyond MAX_LEN."""
    tokens = pad_sequence([seq[:MAX_LEN] for seq, _ in samples], batch_first=True)
    return tokens, torch.stack([label for _, label in samples])


torch.manual_seed(0)
lengths = torch.randint(1, MAX_LEN + 16, (40,)).tolist()  # variable, some longer than MAX_LEN
dataset = [(torch.randint(1, VOCAB, (n,)), torch.tensor(n % 2)) for n in lengths]
dataset.sort(key=lambda sample: len(sample[0]))  # sorted by length to minimise padding
loader = DataLoader(
    dataset, batch_size=BATCH_SIZE, collate_fn=collate, pin_memory=torch.cuda.is_available()
)

model = Classifier().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loss_fn = nn.CrossEntropyLoss()
seen_shapes = []  # the input shape of every forward pass, in order
model.register_forward_pre_hook(lambda module, args: seen_shapes.append(tuple(args[0].shape)))

for tokens, labels in loader:
    tokens = tokens.to(device, non_blocking=True)
    labels = labels.to(device, non_blocking=True)
    optimizer.zero_grad(set_to_none=True)
    loss_fn(model(tokens), labels).backward()
    optimizer.step()
