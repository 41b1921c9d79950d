# Evaluate under torch.inference_mode() rather than torch.no_grad() (before)
# Generated from tips/inference-mode-for-eval.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/inference-mode-for-eval/before.py
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 4))
x_val = torch.randn(256, 20)
y_val = torch.randint(0, 4, (256,))


@torch.no_grad()  # no graph, but outputs are still ordinary, version-tracked tensors
def evaluate(model, x, y):
    model.eval()
    logits = model(x)
    accuracy = (logits.argmax(dim=1) == y).float().mean()
    return logits, accuracy.item()


logits, accuracy = evaluate(model, x_val, y_val)
print(f"accuracy {accuracy:.3f}")
