# Keep a small training set on the GPU and index batches there (after)
# Generated from tips/device-resident-data.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/device-resident-data/after.py
import torch
import torch.nn.functional as F
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
images, labels = torch.randn(4096, 3, 8, 8), torch.randint(0, 10, (4096,))  # the training set
BATCH = 128

# Once, before training: the whole set moves to the device (check the memory budget first).
images_dev, labels_dev = images.to(device), labels.to(device)
generator = torch.Generator(device=device).manual_seed(0)

model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def batches():
    """Shuffle and gather on the device: no DataLoader, no copy from the host."""
    order = torch.randperm(len(images_dev), device=device, generator=generator)
    for index in order.split(BATCH):
        yield index, images_dev[index], labels_dev[index]


def train_epoch():
    for _, x, y in batches():
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


for _ in range(2):  # two epochs
    train_epoch()
