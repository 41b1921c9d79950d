# Keep images in HWC through augmentation and convert once, as a view (after)
# Generated from tips/channels-last-augmentation-hwc.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/channels-last-augmentation-hwc/after.py
import numpy as np
import torch
from torch import nn


def augment(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """HWC uint8 in, HWC uint8 out: the layout OpenCV and albumentations work in."""
    if rng.random() < 0.5:
        img = img[:, ::-1]  # horizontal flip (a view with a negative stride)
    top, left = rng.integers(0, 9, size=2)
    img = img[top:top + 24, left:left + 24]  # random 24x24 crop (a view)
    return np.ascontiguousarray(img)  # one compact HWC array, as the libraries return


rng = np.random.default_rng(0)
# Decoded images (cv2.imread, np.asarray(PIL.Image)) are HWC uint8 arrays.
images = [rng.integers(0, 256, size=(32, 32, 3), dtype=np.uint8) for _ in range(8)]
augmented = [augment(img, rng) for img in images]  # HWC all the way through

# One sample: HWC -> CHW is a view, no data moves.
sample = torch.from_numpy(augmented[0]).permute(2, 0, 1)

# A batch: stack in HWC (the one copy a batch needs), then view it as NCHW.
batch = torch.from_numpy(np.stack(augmented)).permute(0, 3, 1, 2)
x = batch.float().div_(255)  # on a GPU, move the uint8 batch first, then convert
model = nn.Conv2d(3, 8, 3, padding=1).to(memory_format=torch.channels_last)
out = model(x)
