# Make training fault tolerant: save on SIGTERM at the end of the step, restart from the latest checkpoint (after)
# Generated from tips/fault-tolerant-training.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/fault-tolerant-training/after.py
import math
import os
import signal
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset

CKPT_DIR = Path(os.environ.get("CKPT_DIR", "checkpoints"))
TOTAL_STEPS = 12


def steps_between_saves(save_s, step_s, mtbf_s):
    """Young/Daly: checkpoint every sqrt(2·save·MTBF) − save seconds of training."""
    interval_s = math.sqrt(2 * save_s * mtbf_s) - save_s
    return max(1, round(interval_s / step_s))


# Measured on the real job: the time a save blocks training and the time of one step.
# The job's mean time between failures falls with its size: ~3 h at 16k GPUs (Llama 3).
SAVE_EVERY = steps_between_saves(save_s=30.0, step_s=2.0, mtbf_s=3 * 3600)  # 387 steps

stop_requested = False


def request_stop(signum, frame):
    """SIGTERM handler: only take note; the training loop stops at the end of the step."""
    global stop_requested
    stop_requested = True


def ignore_sigterm(worker_id):
    """DataLoader workers ignore SIGTERM: torchrun forwards it to each rank's whole process
    group, and Slurm signals every process; a killed worker would make the loop raise
    before the end-of-step save."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


class StepBatches(Dataset):
    """Item `step` is a rank's batch of that step: data as a function of the step."""

    def __init__(self, rank):
        self.rank = rank

    def __len__(self):
        return TOTAL_STEPS

    def __getitem__(self, step):
        g = torch.Generator().manual_seed(1000 * step + self.rank)
        return torch.randn(8, 16, generator=g), torch.randn(8, 1, generator=g)


def latest_checkpoint():
    paths = sorted(CKPT_DIR.glob("step-*.pt"))  # complete files only, never *.tmp
    return paths[-1] if paths else None


def save(model, optimizer, step):
    if dist.get_rank() == 0:
        CKPT_DIR.mkdir(parents=True, exist_ok=True)
        state = {
            "model": model.module.state_dict(),
            "optimizer": optimizer.state_dict(),
            "step": step,
        }
        path = CKPT_DIR / f"step-{step:06d}.pt"
        torch.save(state, path.with_suffix(".tmp"))
        os.replace(path.with_suffix(".tmp"), path)  # atomic: a kill mid-write leaves only the .tmp
    dist.barrier()


def train_step(model, optimizer, step, batch):
    """One optimizer step on `batch`, the data of step `step`."""
    x, y = batch
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def train():
    """Train to TOTAL_STEPS from the newest checkpoint; return the step it stopped after."""
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    start = 0
    if (path := latest_checkpoint()) is not None:  # a restart: continue where the last run stopped
        ckpt = torch.load(path, weights_only=True)
        model.module.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start = ckpt["step"]
    batches = DataLoader(
        StepBatches(dist.get_rank()),
        batch_size=None,  # each item is already a batch
        sampler=range(start, TOTAL_STEPS),  # resume at the checkpoint's step
        num_workers=1,
        worker_init_fn=ignore_sigterm,
    )
    for step, batch in zip(range(start, TOTAL_STEPS), batches, strict=True):
        train_step(model, optimizer, step, batch)
        # A host tensor: reading it never waits for the GPU (with "cpu:gloo,cuda:nccl" below,
        # gloo reduces it).
        stop = torch.tensor(float(stop_requested))
        dist.all_reduce(stop, op=dist.ReduceOp.MAX)  # a signal on any rank stops them all here
        stopping, done = bool(stop.item()), step + 1
        if stopping or done % SAVE_EVERY == 0 or done == TOTAL_STEPS:
            save(model, optimizer, done)
        if stopping:
            return done  # preempted and saved: exit 0, the scheduler requeues the job
    return TOTAL_STEPS


def main():
    signal.signal(signal.SIGTERM, request_stop)  # torchrun forwards SIGTERM to every rank
    # GPUs: "cpu:gloo,cuda:nccl" (NCCL for the model, gloo for the stop flag), and
    # torch.cuda.set_device(local_rank).
    dist.init_process_group("gloo")
    train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
