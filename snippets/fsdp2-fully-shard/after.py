# When DDP replicas no longer fit, shard the model with FSDP2 `fully_shard`, block by block (after)
# Generated from tips/fsdp2-fully-shard.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/fsdp2-fully-shard/after.py
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
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor


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
    # GPUs: torch.cuda.set_device(local_rank), backend "nccl", init_device_mesh("cuda", ...).
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cpu", (world,))
    model = make_model()
    # Compute in bf16; keep fp32 shards for the optimizer; reduce gradients in fp32.
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model[:-1]:  # one all-gather / reduce-scatter group per block...
        fully_shard(block, mesh=mesh, mp_policy=mp, reshard_after_forward=True)
    fully_shard(model, mesh=mesh, mp_policy=mp, reshard_after_forward=False)  # ...then the root
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)  # created after sharding
    shards = {n: p.to_local().detach().clone() for n, p in model.named_parameters()}

    x, y = global_batch()
    x, y = x.chunk(world)[rank], y.chunk(world)[rank]  # this rank's half of the batch
    logits = model(x)
    # Between forward and backward: the blocks (True) are back to their shards, while the
    # root (False) still holds its all-gathered bf16 weight.
    root_weight = model[-1].weight
    held = {
        "blocks_sharded": [isinstance(b.mlp[0].weight, DTensor) for b in model[:-1]],
        "root": (isinstance(root_weight, DTensor), root_weight.dtype, tuple(root_weight.shape)),
    }
    nn.functional.cross_entropy(logits.float(), y).backward()  # reduce-scatter: averaged grad shards
    optimizer.step()

    params = dict(model.named_parameters())
    storages = {p.to_local().untyped_storage().data_ptr(): p.to_local().untyped_storage().nbytes()
                for p in params.values()}
    torch.save({  # what this rank holds, for the checks
        "shards": shards,
        "global_numel": {n: p.numel() for n, p in params.items()},  # a DTensor reports the full size
        "grads": {n: p.grad.to_local() for n, p in params.items()},
        "param_dtype": {n: p.dtype for n, p in params.items()},
        "exp_avg_numel": {n: optimizer.state[p]["exp_avg"].to_local().numel() for n, p in params.items()},
        "param_bytes": sum(storages.values()),
        "logits_dtype": logits.dtype,
        "held": held,
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
