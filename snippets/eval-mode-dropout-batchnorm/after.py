# Call model.eval() before evaluating and model.train() before training again (after)
# Generated from tips/eval-mode-dropout-batchnorm.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/eval-mode-dropout-batchnorm/after.py
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 3)
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x_train, y_train = torch.randn(64, 8), torch.randint(0, 3, (64,))
x_val = torch.randn(16, 8) + 2.0  # validation data from a shifted distribution


@torch.no_grad()  # no autograd graph: a separate concern from eval mode
def evaluate(model, x):
    was_training = model.training
    model.eval()  # Dropout off, BatchNorm uses (and keeps) its running statistics
    try:
        return model(x)
    finally:
        model.train(was_training)  # hand the model back in the mode we got it


for _ in range(3):
    model.train()  # explicit at the start of every epoch
    for xb, yb in zip(x_train.split(16), y_train.split(16), strict=True):
        optimizer.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    val_logits = evaluate(model, x_val)
