# Index in-memory datasets one batch at a time, not one sample at a time (after)
# Generated from tips/in-memory-batched-indexing.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/in-memory-batched-indexing/after.py
import torch
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset

torch.manual_seed(0)
images, labels = torch.randn(1000, 3, 8, 8), torch.randint(0, 10, (1000,))
dataset = TensorDataset(images, labels)  # dataset[list_of_indices] returns a whole batch
BATCH = 64

# The sampler yields whole lists of indices; batch_size=None switches off per-sample
# fetching and collation, so each batch is one dataset[indices]: one gather per tensor.
loader = DataLoader(
    dataset,
    batch_size=None,
    sampler=BatchSampler(
        RandomSampler(dataset, generator=torch.Generator().manual_seed(0)),
        batch_size=BATCH,
        drop_last=False,
    ),
)


def direct_batches(generator):
    """No DataLoader at all: slice a permutation and index the tensors."""
    for index in torch.randperm(len(images), generator=generator).split(BATCH):
        yield images[index], labels[index]


model = torch.nn.Linear(3 * 8 * 8, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x.flatten(1)), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
