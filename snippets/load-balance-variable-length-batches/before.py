# Bucket variable-length samples so each batch, and each rank, gets similar lengths (before)
# Generated from tips/load-balance-variable-length-batches.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/load-balance-variable-length-batches/before.py
import torch
from torch import nn
from torch.utils.data import DataLoader

PAD = 0


def pad_collate(batch):
    indices, seqs = zip(*batch, strict=True)
    return torch.tensor(indices), nn.utils.rnn.pad_sequence(
        list(seqs), batch_first=True, padding_value=PAD)


g = torch.Generator().manual_seed(0)
lengths = torch.randint(4, 129, (512,), generator=g).tolist()
dataset = [(i, torch.randint(1, 1000, (n,), generator=g)) for i, n in enumerate(lengths)]

# Random batches: each one is padded to whatever long sequence it happened to draw.
loader = DataLoader(dataset, batch_size=16, shuffle=True, collate_fn=pad_collate,
                    generator=torch.Generator().manual_seed(0))
padding = sum((tokens == PAD).sum().item() for _, tokens in loader)
