# Keep DataLoader workers alive between epochs and size their prefetch (after)
# Generated from tips/dataloader-prefetch-persistent-workers.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/dataloader-prefetch-persistent-workers/after.py
import torch
from torch.utils.data import DataLoader, Dataset


class IndexedShards(Dataset):
    """Opens its data source lazily, once per process: a file, a database, a decoder."""

    def __init__(self, size):
        self.size, self.source = size, None

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if self.source is None:  # first item in this process: the expensive set-up
            self.source = torch.arange(self.size) * 10  # stands in for an opened shard
        return self.source[index]


if __name__ == "__main__":
    dataset = IndexedShards(32)
    loader = DataLoader(
        dataset,
        batch_size=8,
        num_workers=2,
        persistent_workers=True,  # the same processes serve every epoch
        prefetch_factor=4,  # batches each worker may prepare ahead (default 2)
    )
    for _epoch in range(3):
        for _batch in loader:
            pass  # the training step
