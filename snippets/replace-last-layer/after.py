# Swap the classifier head for a new nn.Linear before building the optimizer (after)
# Generated from tips/replace-last-layer.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/replace-last-layer/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


class TinyNet(nn.Module):
    """Stands in for a pretrained backbone with a ResNet-style `.fc` head."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten()
        )
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        return self.fc(self.features(x))


torch.manual_seed(0)
model = TinyNet(num_classes=10)  # imagine pretrained weights loaded here

# 1. Swap the head, reading its input width from the old layer.
num_classes = 3
model.fc = nn.Linear(model.fc.in_features, num_classes)
# 2. Optionally freeze the backbone and train only the head at first.
model.features.requires_grad_(False)
# 3. Move the model (new head included), then build the optimizer.
model.to(device)
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)

x = torch.randn(4, 3, 16, 16, device=device)
y = torch.randint(0, num_classes, (4,), device=device)
logits = model(x)
loss = nn.functional.cross_entropy(logits, y)
loss.backward()
optimizer.step()
