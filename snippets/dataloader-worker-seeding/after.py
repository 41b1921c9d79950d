# Seed DataLoader workers with a generator and a worker_init_fn (after)
# Generated from tips/dataloader-worker-seeding.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/dataloader-worker-seeding/after.py
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info


class NoisyDataset(Dataset):
    """Adds random noise to each sample, a stand-in for random augmentation."""

    def __init__(self, n=16, seed=0):
        self.data = torch.arange(n)
        self.rng = np.random.default_rng(seed)  # replaced in each worker by seed_worker

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        own = self.rng.normal()  # the dataset's own generator
        shared = np.random.rand()  # NumPy's global generator, as many libraries use
        return self.data[i], torch.tensor(own), torch.tensor(shared), get_worker_info().id


def seed_worker(worker_id):
    """Runs inside each worker before it loads anything."""
    seed = torch.initial_seed()  # base_seed + worker_id, drawn from the loader's generator
    random.seed(seed)  # PyTorch >= 1.9 already does these two; explicit is harmless
    np.random.seed(seed % 2**32)
    get_worker_info().dataset.rng = np.random.default_rng(seed)  # the one PyTorch can't do


def make_loader(seed):
    return DataLoader(
        NoisyDataset(),
        batch_size=4,
        shuffle=True,
        num_workers=2,
        worker_init_fn=seed_worker,
        generator=torch.Generator().manual_seed(seed),  # shuffling and worker seeds
    )


def one_epoch(loader):
    """Index, own-generator noise, global-NumPy noise and worker id of every sample."""
    return [torch.cat(parts) for parts in zip(*loader, strict=True)]


if __name__ == "__main__":  # required under spawn/forkserver (Windows, macOS, Linux 3.14+)
    run1 = one_epoch(make_loader(seed=0))
    run2 = one_epoch(make_loader(seed=0))  # a second "run" with the same seed
