# Pair `non_blocking=True` with pinned memory from the DataLoader (after)
# Generated from tips/pin-memory-non-blocking.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/pin-memory-non-blocking/after.py
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
dataset = TensorDataset(torch.randn(512, 32), torch.randint(0, 4, (512,)))

if __name__ == "__main__":
    loader = DataLoader(
        dataset,
        batch_size=64,
        num_workers=2,  # workers fetch; a background thread pins their batches
        pin_memory=torch.cuda.is_available(),  # pinning requires CUDA
    )
    model = nn.Linear(32, 4).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x_cpu, y_cpu in loader:
        # From pinned memory the copy is only queued; the host goes on to the forward pass.
        x = x_cpu.to(device, non_blocking=True)
        y = y_cpu.to(device, non_blocking=True)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
