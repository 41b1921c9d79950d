# Fold test-time augmentation views into the batch and run one forward pass (after)
# Generated from tips/test-time-augmentation-batch.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/test-time-augmentation-batch/after.py
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5),
).eval()  # eval(): BatchNorm must not mix statistics across views


def tta_views(images, size=12):
    """Four corner crops, the centre crop and their mirror images: (B, 10, C, size, size)."""
    _, _, height, width = images.shape
    tops = [0, 0, height - size, height - size, (height - size) // 2]
    lefts = [0, width - size, 0, width - size, (width - size) // 2]
    crops = [images[..., t:t + size, s:s + size] for t, s in zip(tops, lefts, strict=True)]
    crops += [crop.flip(-1) for crop in crops]
    return torch.stack(crops, dim=1)


def predict_tta(model, views):
    batch, n_views = views.shape[:2]
    with torch.no_grad():
        logits = model(views.flatten(0, 1))  # (B*V, C, H, W): one forward pass
    probs = logits.softmax(-1).unflatten(0, (batch, n_views))  # back to (B, V, classes)
    return probs.mean(1)


images = torch.randn(4, 3, 16, 16)
views = tta_views(images)
probs = predict_tta(model, views)
