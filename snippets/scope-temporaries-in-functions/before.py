# Put per-batch work in a function so its tensors die at return (before)
# Generated from tips/scope-temporaries-in-functions.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/scope-temporaries-in-functions/before.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
batches = [(torch.randn(64, 256), torch.randint(0, 10, (64,))) for _ in range(4)]

for inputs, target in batches:
    x, y = inputs.to(device), target.to(device)
    pred = model(x)
    loss = loss_fn(pred, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()

# No block scope: the last batch's x, y, pred and loss are still alive here, holding
# memory while, for example, a validation pass runs next.
