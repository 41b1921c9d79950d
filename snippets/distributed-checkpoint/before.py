# Checkpoint sharded models with `torch.distributed.checkpoint`, in parallel and in the background (before)
# Generated from tips/distributed-checkpoint.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/distributed-checkpoint/before.py
import os
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict

# The training script each rank runs; torchrun starts one copy per device.
SCRIPT = '''
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict, set_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

STEPS, SAVE_EVERY = 4, 2


def build(world_size):
    """An FSDP2 model sharded over `world_size` ranks, and its optimizer."""
    mesh = init_device_mesh("cpu", (world_size,))  # GPUs: "cuda"
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8))
    for layer in (model[0], model[2]):
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-2)


def train_step(model, optimizer, step):
    x = torch.randn(8, 32, generator=torch.Generator().manual_seed(step))
    model(x).square().mean().backward()
    optimizer.step()
    optimizer.zero_grad()


def save(model, optimizer, path):
    """Gather the full model and optimizer state on rank 0, which writes it alone."""
    full = get_state_dict(model, optimizer, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if dist.get_rank() == 0:
        torch.save(full, path)
    dist.barrier()  # the others wait for the single writer


def load(model, optimizer, path):
    """Resume: every rank reads the whole file, then keeps its own shards."""
    model_sd, optim_sd = torch.load(path, weights_only=True)
    set_state_dict(model, optimizer, model_state_dict=model_sd, optim_state_dict=optim_sd,
                   options=StateDictOptions(full_state_dict=True))


def main(ckpt_dir):
    # GPUs: torch.cuda.set_device(local_rank) and the backend "cpu:gloo,cuda:nccl".
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    model, optimizer = build(dist.get_world_size())
    for step in range(1, STEPS + 1):
        train_step(model, optimizer, step)
        if step % SAVE_EVERY == 0:
            save(model, optimizer, f"{ckpt_dir}/step-{step}.pt")  # training waits for the write
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
'''


def torchrun(script: Path, *args: str, nproc: int = 2, timeout: float = 120) -> None:
    """Run `torchrun --standalone --nproc_per_node=<nproc> script args`, bounded in time."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc_per_node={nproc}", str(script), *args]
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # this demo runs on CPU with gloo
    proc = subprocess.Popen(cmd, env=env)
    try:
        returncode = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.terminate()  # torchrun passes SIGTERM on to its workers
        proc.wait()
        raise
    if returncode:
        raise subprocess.CalledProcessError(returncode, cmd)


tmp = tempfile.TemporaryDirectory()  # removed when the program exits
ckpt = Path(tmp.name)
script = ckpt / "train.py"
script.write_text(SCRIPT)
torchrun(script, str(ckpt), nproc=2)  # trains on 2 ranks, saves at steps 2 and 4

# Resume in this single process (a 1-rank group) from the file the 2 ranks wrote.
train = runpy.run_path(str(script))
dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
model, optimizer = train["build"](1)
train["load"](model, optimizer, ckpt / "step-2.pt")
resumed = get_state_dict(model, optimizer, options=StateDictOptions(full_state_dict=True))
dist.destroy_process_group()
