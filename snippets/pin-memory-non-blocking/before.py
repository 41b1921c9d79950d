# Pair `non_blocking=True` with pinned memory from the DataLoader (before)
# Generated from tips/pin-memory-non-blocking.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/pin-memory-non-blocking/before.py
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
dataset = TensorDataset(torch.randn(512, 32), torch.randint(0, 4, (512,)))
loader = DataLoader(dataset, batch_size=64)  # batches land in ordinary, pageable memory

model = nn.Linear(32, 4).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x_cpu, y_cpu in loader:
    # Looks asynchronous, but from pageable memory the host waits for the staging copy.
    x = x_cpu.to(device, non_blocking=True)
    y = y_cpu.to(device, non_blocking=True)
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
