# Keep images in HWC through augmentation and convert once, as a view (before)
# Generated from tips/channels-last-augmentation-hwc.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/channels-last-augmentation-hwc/before.py
import numpy as np
import torch
from torch import nn


def augment(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """HWC uint8 in, HWC uint8 out: the layout OpenCV and albumentations work in."""
    if rng.random() < 0.5:
        img = img[:, ::-1]  # horizontal flip
    top, left = rng.integers(0, 9, size=2)
    img = img[top:top + 24, left:left + 24]  # random 24x24 crop
    return np.ascontiguousarray(img)


rng = np.random.default_rng(0)
images = [rng.integers(0, 256, size=(32, 32, 3), dtype=np.uint8) for _ in range(8)]

# CHW right after decoding: a transposing copy per image...
tensors = [torch.from_numpy(img).permute(2, 0, 1).contiguous() for img in images]
samples = []
for t in tensors:
    hwc = np.ascontiguousarray(t.permute(1, 2, 0).numpy())  # ...back to HWC for the library...
    out = augment(hwc, rng)
    samples.append(torch.from_numpy(out).permute(2, 0, 1).contiguous())  # ...and to CHW again
batch = torch.stack(samples)  # contiguous NCHW
x = batch.float().div_(255)
model = nn.Conv2d(3, 8, 3, padding=1).to(memory_format=torch.channels_last)
out = model(x)  # the channels_last model transposes the batch once more
