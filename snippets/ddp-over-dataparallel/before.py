# Use `DistributedDataParallel` with one process per GPU, not `nn.DataParallel` (before)
# Generated from tips/ddp-over-dataparallel.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/ddp-over-dataparallel/before.py
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
# One process drives every visible GPU: each forward copies the weights to all of them,
# scatters the batch, and gathers the outputs back on the first GPU.
dp_model = nn.DataParallel(model)
optimizer = torch.optim.SGD(dp_model.parameters(), lr=0.05)

dataset = TensorDataset(torch.randn(64, 16), torch.randn(64, 1))
loader = DataLoader(dataset, batch_size=16, shuffle=True)  # the whole batch goes to GPU 0

for _ in range(2):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = nn.functional.mse_loss(dp_model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
