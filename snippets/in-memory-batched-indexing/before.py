# Index in-memory datasets one batch at a time, not one sample at a time (before)
# Generated from tips/in-memory-batched-indexing.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/in-memory-batched-indexing/before.py
import torch
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
images, labels = torch.randn(1000, 3, 8, 8), torch.randint(0, 10, (1000,))
dataset = TensorDataset(images, labels)
BATCH = 64

# Per-sample: BATCH calls of dataset[i], then default_collate stacks the BATCH samples.
loader = DataLoader(dataset, batch_size=BATCH, shuffle=True)

model = torch.nn.Linear(3 * 8 * 8, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x.flatten(1)), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
