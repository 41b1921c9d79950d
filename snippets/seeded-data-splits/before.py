# Split datasets with random_split and a dedicated seeded generator (before)
# Generated from tips/seeded-data-splits.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/seeded-data-splits/before.py
import torch
from torch.utils.data import TensorDataset, random_split

dataset = TensorDataset(torch.randn(100, 4), torch.randint(0, 3, (100,)))

torch.manual_seed(0)
train_set, val_set = random_split(dataset, [80, 20])  # uses the global generator

# Later, e.g. in the evaluation script or a resumed run, something else draws first:
model = torch.nn.Linear(4, 3)
train_again, val_again = random_split(dataset, [80, 20])
