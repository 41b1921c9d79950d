# Find the largest batch that fits by catching only out-of-memory errors (before)
# Generated from tips/find-max-batch-size.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/find-max-batch-size/before.py
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
dataset = TensorDataset(torch.randn(512, 64), torch.randint(0, 10, (512,)))


def train_epoch(dataset, batch_size):
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
    for x, y in loader:
        try:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
        except RuntimeError:  # meant for "CUDA out of memory", but catches every RuntimeError
            batch_size -= 1  # one sample at a time: many failed steps to reach a size that fits
            # Rebinding `loader` does not affect the loop above, which keeps the old batches.
            loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
    return batch_size


batch_size = train_epoch(dataset, batch_size=128)
print(f"batch size after one epoch: {batch_size}")
