# When DDP replicas no longer fit, shard the model with FSDP2 `fully_shard`, block by block (before)
# Generated from tips/fsdp2-fully-shard.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/fsdp2-fully-shard/before.py
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
from torch.nn.parallel import DistributedDataParallel as DDP


class Block(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


def make_model():
    torch.manual_seed(0)  # every rank starts from the same weights
    return nn.Sequential(*[Block() for _ in range(4)], nn.Linear(64, 10))


def global_batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 64, generator=g), torch.randint(0, 10, (16,), generator=g)


def main(out_dir):
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    model = DDP(make_model())  # every rank holds the whole model...
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)  # ...and all of AdamW's moments

    x, y = global_batch()
    x, y = x.chunk(world)[rank], y.chunk(world)[rank]  # this rank's half of the batch
    logits = model(x)
    nn.functional.cross_entropy(logits, y).backward()  # all-reduce: full averaged gradients
    optimizer.step()

    params = dict(model.module.named_parameters())
    torch.save({  # what this rank holds
        "shards": {n: p.detach().clone() for n, p in params.items()},
        "global_numel": {n: p.numel() for n, p in params.items()},
        "grads": {n: p.grad for n, p in params.items()},
        "exp_avg_numel": {n: optimizer.state[p]["exp_avg"].numel() for n, p in params.items()},
        "param_bytes": sum(p.untyped_storage().nbytes() for p in params.values()),
        "logits_dtype": logits.dtype,
    }, f"{out_dir}/rank{rank}.pt")
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
