# GPU-side decoding and augmentation: ship JPEG bytes, decode with nvJPEG, augment and normalise on the GPU (before)
# Generated from tips/gpu-image-decoding-augmentation.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/gpu-image-decoding-augmentation/before.py
import tempfile
from pathlib import Path

import torch
from torch.utils.data import DataLoader, Dataset
from torchvision.io import decode_jpeg, read_file, write_jpeg
from torchvision.transforms import v2

device = "cuda"

# Stand-in for an image folder: 64 photos (smooth gradients and noise) as JPEG files.
folder = Path(tempfile.mkdtemp())
torch.manual_seed(0)
ramp = torch.linspace(0, 255, 320)
for i in range(64):
    pixels = (ramp.view(1, -1, 1) + ramp.view(1, 1, -1)) / 2 + 12 * torch.randn(3, 320, 320)
    write_jpeg(pixels.clamp(0, 255).to(torch.uint8), str(folder / f"{i:03d}.jpg"), quality=90)
paths = sorted(folder.glob("*.jpg"))

augment = v2.Compose([
    v2.RandomResizedCrop(224, antialias=True),
    v2.RandomHorizontalFlip(),
    v2.ToDtype(torch.float32, scale=True),
    v2.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
])


class DecodedImages(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        # Each worker reads, decodes, augments and normalises on the CPU.
        return augment(decode_jpeg(read_file(str(self.paths[i]))))


loader = DataLoader(DecodedImages(paths), batch_size=32, num_workers=2, pin_memory=True)
for images in loader:
    images = images.to(device, non_blocking=True)  # float32: 4 bytes per channel and pixel
