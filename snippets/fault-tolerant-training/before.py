# Make training fault tolerant: save on SIGTERM at the end of the step, restart from the latest checkpoint (before)
# Generated from tips/fault-tolerant-training.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/fault-tolerant-training/before.py
import os
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

CKPT_DIR = Path(os.environ.get("CKPT_DIR", "checkpoints"))
TOTAL_STEPS, SAVE_EVERY = 12, 4


def latest_checkpoint():
    paths = sorted(CKPT_DIR.glob("step-*.pt"))
    return paths[-1] if paths else None


def save(model, optimizer, step):
    if dist.get_rank() == 0:
        CKPT_DIR.mkdir(parents=True, exist_ok=True)
        state = {
            "model": model.module.state_dict(),
            "optimizer": optimizer.state_dict(),
            "step": step,
        }
        torch.save(state, CKPT_DIR / f"step-{step:06d}.pt")
    dist.barrier()


def train_step(model, optimizer, step):
    g = torch.Generator().manual_seed(1000 * step + dist.get_rank())  # data: a function of the step
    x, y = torch.randn(8, 16, generator=g), torch.randn(8, 1, generator=g)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def train():
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    start = 0
    if (path := latest_checkpoint()) is not None:
        ckpt = torch.load(path, weights_only=True)
        model.module.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start = ckpt["step"]
    for step in range(start, TOTAL_STEPS):
        train_step(model, optimizer, step)
        if (step + 1) % SAVE_EVERY == 0:  # SIGTERM between two saves: the steps since are lost
            save(model, optimizer, step + 1)
    return TOTAL_STEPS


def main():
    dist.init_process_group("gloo")  # GPUs: "nccl", and torch.cuda.set_device(local_rank)
    train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
