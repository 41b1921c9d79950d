"""Lightning's Trainer with the generated script's settings, for compose_compare.py.

The same model, data and optimizer settings as the train.py next to it (imported from
it, data loader included: one indexing operation a batch), with the speed flags mapped
to Lightning's own: precision="bf16-mixed" for --amp, benchmark=True for
--cudnn-benchmark; the network is compiled in place (model.compile()) as the generated
script does. No logger, checkpoints, progress bar or model summary. A callback reads
the loss (a sync on CUDA) every --every steps and prints a line with "samples/s",
which the benchmark times.
"""

from __future__ import annotations

import argparse
import logging
import warnings

import lightning as L
import torch
import torch.nn.functional as F
from torch.utils.data import BatchSampler, RandomSampler, TensorDataset
from train import batch_loader, build_dataset, build_model, presets, weight_decay


class Classifier(L.LightningModule):
    def __init__(self, width: int, args: argparse.Namespace) -> None:
        super().__init__()
        self.args = args
        self.model = build_model(width)
        if args.channels_last:
            self.model.to(memory_format=torch.channels_last)
        if args.compile:
            self.model.compile()

    def training_step(self, batch, batch_idx):
        x, y = batch
        if self.args.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        return F.cross_entropy(self.model(x), y)

    def configure_optimizers(self):
        return torch.optim.AdamW(
            self.parameters(),
            lr=self.args.lr,
            weight_decay=weight_decay,
            fused=True if self.args.fused_optimizer else None,
        )


class Report(L.Callback):
    def __init__(self, every: int) -> None:
        self.every = every

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.global_step % self.every == 0:
            outputs["loss"].item()  # waits for the device
            print(f"step {trainer.global_step} | samples/s", flush=True)


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
    for name in ("lightning", "lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)  # no banners
    warnings.filterwarnings("ignore", module="lightning")

    torch.manual_seed(0)
    data = build_dataset("train", size["samples"], size["image_size"])
    if args.data_on_device:
        data = TensorDataset(*(t.to(device) for t in data.tensors))
    generator = torch.Generator().manual_seed(0)
    sampler = RandomSampler(data, generator=generator, num_samples=10**9)  # never ends
    loader = batch_loader(data, BatchSampler(sampler, size["batch_size"], drop_last=True))
    trainer = L.Trainer(
        accelerator="gpu" if device.type == "cuda" else "cpu",
        devices=1,
        precision="bf16-mixed" if args.amp else "32-true",
        benchmark=args.cudnn_benchmark,
        max_steps=args.steps,
        max_epochs=-1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        use_distributed_sampler=False,
        callbacks=[Report(args.every)],
    )
    trainer.fit(Classifier(size["width"], args), train_dataloaders=loader)


if __name__ == "__main__":
    main()
