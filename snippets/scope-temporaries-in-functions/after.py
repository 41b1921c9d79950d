# Put per-batch work in a function so its tensors die at return (after)
# Generated from tips/scope-temporaries-in-functions.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/scope-temporaries-in-functions/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
batches = [(torch.randn(64, 256), torch.randint(0, 10, (64,))) for _ in range(4)]


def train_step(inputs, target):
    x, y = inputs.to(device), target.to(device)  # the inputs and the target go to the device
    pred = model(x)
    loss = loss_fn(pred, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()  # only a graph-free value leaves the function


for inputs, target in batches:
    last_loss = train_step(inputs, target)
# x, y, pred and loss were locals of train_step: already freed.
