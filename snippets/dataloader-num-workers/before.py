# Load batches in DataLoader worker processes (before)
# Generated from tips/dataloader-num-workers.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/dataloader-num-workers/before.py
import os

import torch
from torch.utils.data import DataLoader, Dataset


class SquaresDataset(Dataset):
    """Stands in for a data set whose __getitem__ reads, decodes and augments a sample."""

    def __len__(self):
        return 64

    def __getitem__(self, index):
        sample = torch.full((4,), float(index)) ** 2
        return sample, index, os.getpid()


# num_workers=0 (the default): every sample is produced inside the training process.
loader = DataLoader(SquaresDataset(), batch_size=8, shuffle=True,
                    generator=torch.Generator().manual_seed(0))
batches = list(loader)
