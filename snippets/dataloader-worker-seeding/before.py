# Seed DataLoader workers with a generator and a worker_init_fn (before)
# Generated from tips/dataloader-worker-seeding.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/dataloader-worker-seeding/before.py
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info


class NoisyDataset(Dataset):
    """Adds random noise to each sample, a stand-in for random augmentation."""

    def __init__(self, n=16, seed=0):
        self.data = torch.arange(n)
        self.rng = np.random.default_rng(seed)  # every worker gets this same state

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        own = self.rng.normal()  # the dataset's own generator
        shared = np.random.rand()  # NumPy's global generator, as many libraries use
        return self.data[i], torch.tensor(own), torch.tensor(shared), get_worker_info().id


def one_epoch(loader):
    """Index, own-generator noise, global-NumPy noise and worker id of every sample."""
    return [torch.cat(parts) for parts in zip(*loader, strict=True)]


if __name__ == "__main__":  # required under spawn/forkserver (Windows, macOS, Linux 3.14+)
    loader = DataLoader(NoisyDataset(), batch_size=4, shuffle=True, num_workers=2)
    index, own, shared, worker = one_epoch(loader)
