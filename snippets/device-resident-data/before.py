# Keep a small training set on the GPU and index batches there (before)
# Generated from tips/device-resident-data.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/device-resident-data/before.py
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
images, labels = torch.randn(4096, 3, 8, 8), torch.randint(0, 10, (4096,))  # the training set
BATCH = 128

# The usual pipeline: batches are assembled in host memory and copied to the device every step.
loader = DataLoader(TensorDataset(images, labels), batch_size=BATCH, shuffle=True,
                    pin_memory=torch.cuda.is_available())

model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def train_epoch():
    for x_host, y_host in loader:
        x, y = x_host.to(device, non_blocking=True), y_host.to(device, non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


for _ in range(2):  # two epochs
    train_epoch()
