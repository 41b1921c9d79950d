# Evaluate under torch.inference_mode() rather than torch.no_grad() (after)
# Generated from tips/inference-mode-for-eval.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/inference-mode-for-eval/after.py
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 4))
x_val = torch.randn(256, 20)
y_val = torch.randint(0, 4, (256,))


@torch.inference_mode()  # no graph, no version counters, no view tracking
def evaluate(model, x, y):
    model.eval()
    logits = model(x)
    accuracy = (logits.argmax(dim=1) == y).float().mean()
    return logits, accuracy.item()


logits, accuracy = evaluate(model, x_val, y_val)
model.train()  # back to training behaviour before the next training step
print(f"accuracy {accuracy:.3f}")
