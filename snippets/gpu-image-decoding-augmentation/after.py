# GPU-side decoding and augmentation: ship JPEG bytes, decode with nvJPEG, augment and normalise on the GPU (after)
# Generated from tips/gpu-image-decoding-augmentation.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/gpu-image-decoding-augmentation/after.py
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

augment = v2.Compose([v2.RandomResizedCrop(224, antialias=True), v2.RandomHorizontalFlip()])
to_float = v2.Compose([
    v2.ToDtype(torch.float32, scale=True),
    v2.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
])


class EncodedImages(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return read_file(str(self.paths[i]))  # the JPEG file as a 1-D uint8 tensor


def as_list(files):  # JPEG files differ in size: keep the batch a list
    return files


loader = DataLoader(EncodedImages(paths), batch_size=32, num_workers=2, collate_fn=as_list)
for files in loader:
    decoded = decode_jpeg(files, device=device)  # nvJPEG, one call for the batch: uint8 on the GPU
    images = torch.stack([augment(image) for image in decoded])  # own random crop and flip each
    images = to_float(images)  # float32 only now, on the GPU
