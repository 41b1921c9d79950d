# Checkpoint sharded models with `torch.distributed.checkpoint`, in parallel and in the background (after)
# Generated from tips/distributed-checkpoint.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/distributed-checkpoint/after.py
import os
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

import torch.distributed as dist
from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict

# The training script each rank runs; torchrun starts one copy per device.
SCRIPT = '''
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
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


def load(model, optimizer, path):
    """Resume: each rank reads just the pieces of the files that its own shards need."""
    model_sd, optim_sd = get_state_dict(model, optimizer)  # this run's sharding, to fill in place
    dcp.load({"model": model_sd, "optim": optim_sd}, checkpoint_id=path)
    set_state_dict(model, optimizer, model_state_dict=model_sd, optim_state_dict=optim_sd)


def main(ckpt_dir):
    # GPUs: torch.cuda.set_device(local_rank) and the backend "cpu:gloo,cuda:nccl".
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    model, optimizer = build(dist.get_world_size())
    ckpt_group = dist.new_group(backend="gloo")  # the background save talks on its own group
    pending = None
    for step in range(1, STEPS + 1):
        train_step(model, optimizer, step)
        if step % SAVE_EVERY:
            continue
        # For the checks: the full state at this step, gathered on rank 0.
        full = get_state_dict(model, optimizer, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        if dist.get_rank() == 0:
            torch.save(full, f"{ckpt_dir}/expected-{step}.pt")

        if pending is not None:
            pending.result()  # at most one checkpoint in flight
        model_sd, optim_sd = get_state_dict(model, optimizer)  # sharded: DTensors, clean FQNs
        state = {"model": model_sd, "optim": optim_sd}
        if step < STEPS:  # copy to host memory, write in a background thread, keep training
            pending = dcp.async_save(state, checkpoint_id=f"{ckpt_dir}/step-{step}", process_group=ckpt_group)
        else:  # the last one: nothing left to overlap with
            dcp.save(state, checkpoint_id=f"{ckpt_dir}/step-{step}")
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

# Resume with a different world size: this single process (a 1-rank group) loads the
# checkpoint that 2 ranks wrote; DCP reshards on load.
train = runpy.run_path(str(script))
dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
model, optimizer = train["build"](1)
train["load"](model, optimizer, ckpt / "step-2")
resumed = get_state_dict(model, optimizer, options=StateDictOptions(full_state_dict=True))
dist.destroy_process_group()

# One plain torch.save file, for tools that know nothing of DCP.
dcp_to_torch_save(ckpt / "step-4", ckpt / "step-4.pt")
