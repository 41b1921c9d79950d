# Build a too-big model on the `meta` device, shard it, then materialise only each rank's shard (after)
# Generated from tips/fsdp2-meta-device-init.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/fsdp2-meta-device-init/after.py
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

# The training script each rank runs; torchrun starts one copy per device.
SCRIPT = '''
import resource
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard


def make_model():
    return nn.Sequential(*[nn.Linear(1024, 1024) for _ in range(8)])  # 34 MB in fp32


def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def main(out_dir):
    # GPUs: torch.cuda.set_device(local_rank), backend "nccl", init_device_mesh("cuda", ...).
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cpu", (world,))
    start = peak_rss()
    with torch.device("meta"):
        model = make_model()  # shapes and dtypes only: no memory, no initialisation
    built = peak_rss()
    for layer in model:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)  # still on meta, now DTensors sharded on dim 0
    sharded = peak_rss()
    model.to_empty(device="cpu")  # allocates this rank's shards only, uninitialised
    # On CUDA, DTensor's random ops give every shard its own part of one random stream.
    # On CPU each rank fills its shard from its own generator: seed the ranks differently,
    # or every rank draws the same numbers.
    torch.manual_seed(1234 + rank)
    with torch.no_grad():
        for module in model.modules():
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()  # sees the global shape: the right fan-in
    done = peak_rss()

    torch.save({  # for the checks
        "model_bytes": sum(p.numel() * p.element_size() for p in model.parameters()),
        "rss_growth": {"build": built - start, "materialise": done - sharded},
        "shards": {n: p.to_local().detach().clone() for n, p in model.named_parameters()},
        "global_shape": {n: tuple(p.shape) for n, p in model.named_parameters()},
    }, f"{out_dir}/rank{rank}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
'''


def torchrun(script: Path, *args: str, nproc: int = 2, timeout: float = 120) -> None:
    """Run `torchrun --standalone --nproc_per_node=<nproc> script args`, bounded in time."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc_per_node={nproc}", str(script), *args]
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # this demo shards on CPU with gloo
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
workdir = Path(tmp.name)
script = workdir / "train.py"
script.write_text(SCRIPT)
torchrun(script, str(workdir))
ranks = [torch.load(workdir / f"rank{r}.pt", weights_only=True) for r in range(2)]
