# Call model.eval() before evaluating and model.train() before training again (before)
# Generated from tips/eval-mode-dropout-batchnorm.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/eval-mode-dropout-batchnorm/before.py
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 3)
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x_train, y_train = torch.randn(64, 8), torch.randint(0, 3, (64,))
x_val = torch.randn(16, 8) + 2.0  # validation data from a shifted distribution


@torch.no_grad()
def evaluate(model, x):
    return model(x)  # still in training mode: Dropout active, BatchNorm uses batch stats


for _ in range(3):
    for xb, yb in zip(x_train.split(16), y_train.split(16), strict=True):
        optimizer.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    val_logits = evaluate(model, x_val)
