# Split datasets with random_split and a dedicated seeded generator (after)
# Generated from tips/seeded-data-splits.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/seeded-data-splits/after.py
import torch
from torch.utils.data import Subset, TensorDataset, random_split

dataset = TensorDataset(torch.randn(100, 4), torch.randint(0, 3, (100,)))


def split(dataset, seed=0):
    generator = torch.Generator().manual_seed(seed)  # independent of the global RNG
    return random_split(dataset, [0.8, 0.2], generator=generator)


train_set, val_set = split(dataset)

# Later, e.g. in the evaluation script or a resumed run, something else draws first:
model = torch.nn.Linear(4, 3)
train_again, val_again = split(dataset)

# The indices are plain ints: store them with the experiment to rebuild the split anywhere.
saved = {"train": train_set.indices, "val": val_set.indices}
val_rebuilt = Subset(dataset, saved["val"])
