# Load batches in DataLoader worker processes (after)
# Generated from tips/dataloader-num-workers.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/dataloader-num-workers/after.py
import os

import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info


class SquaresDataset(Dataset):
    """Stands in for a data set whose __getitem__ reads, decodes and augments a sample."""

    def __len__(self):
        return 64

    def __getitem__(self, index):
        sample = torch.full((4,), float(index)) ** 2
        info = get_worker_info()  # None in the main process
        return sample, index, os.getpid(), -1 if info is None else info.id


if __name__ == "__main__":  # required where workers are spawned (macOS, Windows)
    loader = DataLoader(
        SquaresDataset(),
        batch_size=8,
        shuffle=True,
        generator=torch.Generator().manual_seed(0),
        num_workers=2,  # tiny demo; in practice start near the CPU cores per GPU and tune
        persistent_workers=True,  # keep the workers between epochs
        prefetch_factor=2,  # batches each worker prepares ahead
    )
    epochs = [list(loader) for _ in range(2)]
