# Tune DDP: `gradient_as_bucket_view`, `bucket_cap_mb`, a compression hook, `static_graph`, `device_id` (after)
# Generated from tips/ddp-tuning-knobs.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/ddp-tuning-knobs/after.py
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

# The training script each rank runs; torchrun starts one copy per device.
SCRIPT = '''
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Linear(256, 256) for _ in range(6)])  # 6 x 257 KiB of fp32


def global_batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(32, 256, generator=g), torch.randn(32, 256, generator=g)


def wrap(model, compress):
    ddp = DDP(
        model,
        gradient_as_bucket_view=True,  # .grad are views into the all-reduce buckets: no 2nd copy
        bucket_cap_mb=0.25,  # bucket size: 25 MiB by default; tiny here to match the tiny model
        static_graph=True,  # same parameters used every step: DDP can skip re-checking
    )
    if compress:  # all-reduce 16-bit gradients: half the bytes on the wire
        # GPUs with NCCL >= 2.10: default_hooks.bf16_compress_hook (fp32's exponent range)
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    return ddp


def main(out_dir):
    # GPUs: torch.cuda.set_device(local_rank) and
    # dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    x, y = global_batch()
    x, y = x.chunk(world)[rank], y.chunk(world)[rank]  # this rank's half
    result = {}
    for compress in (False, True):
        ddp = wrap(make_model(), compress)
        for _ in range(4):  # DDP settles its buckets over the first steps
            ddp.zero_grad()
            nn.functional.mse_loss(ddp(x), y).backward()
        grads = [p.grad for p in ddp.parameters()]
        result["fp16" if compress else "fp32"] = {  # for the checks
            "grads": [g.clone() for g in grads],
            "storages": [g.untyped_storage().data_ptr() for g in grads],
            "storage_bytes": {g.untyped_storage().data_ptr(): g.untyped_storage().nbytes() for g in grads},
        }
    torch.save(result, f"{out_dir}/rank{rank}.pt")
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
workdir = Path(tmp.name)
script = workdir / "train.py"
script.write_text(SCRIPT)
torchrun(script, str(workdir))
ranks = [torch.load(workdir / f"rank{r}.pt", weights_only=True) for r in range(2)]
