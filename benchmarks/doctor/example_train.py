"""An image classifier's training script with mistakes that are common in real code, the
subject of the example report on the doctor's page (docs/doctor.md), produced by
benchmarks/doctor_example.py:

- each sample is decoded and augmented in __getitem__, with the DataLoader's default
  num_workers=0, so the training loop waits for every batch;
- the gradients are zero-filled (set_to_none=False) rather than freed;
- the loss of every step is kept in a list, with its autograd graph, to print a running
  mean, which also reads the loss back with .item() every step.

    python benchmarks/doctor/example_train.py --epochs 1
"""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    """Synthetic 3x32x32 images of 10 classes, made, resized and flipped one by one."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        g = torch.Generator().manual_seed(i)
        image = torch.rand(3, 128, 128, generator=g) + (i % 10) / 10  # "decode"
        image = F.interpolate(image[None], size=(32, 32), mode="bilinear")[0]  # resize
        if torch.rand(1, generator=g).item() < 0.5:
            image = image.flip(-1)  # random horizontal flip
        return (image - 1.0) / 0.5, i % 10


def build_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 10),
    )


def running_mean(losses: list[torch.Tensor], last: int = 20) -> float:
    return torch.stack(losses[-last:]).mean().item()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    args = p.parse_args()
    torch.manual_seed(0)
    loader = DataLoader(Images(4096), batch_size=args.batch_size, shuffle=True)
    model = build_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for epoch in range(args.epochs):
        for step, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=False)
            loss.backward()
            optimizer.step()
            losses.append(loss)
            if step % 10 == 0:
                print(f"epoch {epoch} step {step}: loss {running_mean(losses):.3f}")


if __name__ == "__main__":
    main()
