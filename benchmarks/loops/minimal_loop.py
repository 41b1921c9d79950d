"""The floor: a minimal hand-written training loop, for benchmarks/compose_compare.py.

It trains the generated script's model on its data with its optimizer settings (imported
from the train.py next to it) and nothing else: in-memory tensors read by direct indexing
with a seeded permutation, forward, loss, zero_grad, backward, step. The speed flags map
to the lines a user would write for them. Every --every steps it reads the loss (a sync
on CUDA) and prints a line with "samples/s", which the benchmark times.
"""

from __future__ import annotations

import argparse
import itertools

import torch
import torch.nn.functional as F
from train import build_dataset, build_model, presets, weight_decay


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--preset", choices=list(presets), default="cpu")
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--steps", type=int, required=True, help="warm-up and measured steps")
    p.add_argument("--every", type=int, default=20, help="steps between reports")
    p.add_argument("--amp", action="store_true", help="bf16 autocast")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--fused-optimizer", action="store_true")
    p.add_argument("--cudnn-benchmark", action="store_true")
    p.add_argument("--data-on-device", action="store_true")
    args = p.parse_args()
    size = presets[args.preset]
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = args.cudnn_benchmark

    torch.manual_seed(0)
    data = build_dataset("train", size["samples"], size["image_size"])
    images, labels = data.tensors
    if args.data_on_device:
        images, labels = images.to(device), labels.to(device)
    memory_format = torch.channels_last if args.channels_last else torch.preserve_format
    model = build_model(size["width"]).to(device, memory_format=memory_format)
    if args.compile:
        model.compile()
    optimizer = torch.optim.AdamW(
        model.parameters(),
        lr=args.lr,
        weight_decay=weight_decay,
        fused=True if args.fused_optimizer else None,
    )
    amp = torch.amp.autocast(device.type, dtype=torch.bfloat16, enabled=args.amp)
    generator = torch.Generator(images.device).manual_seed(0)
    batch = size["batch_size"]

    def batches():
        for _ in itertools.count():
            order = torch.randperm(len(labels), generator=generator, device=images.device)
            for start in range(0, len(order) - batch + 1, batch):
                index = order[start : start + batch]
                yield images[index], labels[index]

    stream = batches()
    for step in range(1, args.steps + 1):
        x, y = next(stream)
        x = x.to(device, memory_format=memory_format)
        y = y.to(device)
        with amp:
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % args.every == 0:
            loss.item()  # waits for the device
            print(f"step {step} | samples/s", flush=True)


if __name__ == "__main__":
    main()
