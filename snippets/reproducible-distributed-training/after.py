# Determinism at scale: repeat a distributed run bit for bit, and match it across world sizes up to rounding (after)
# Generated from tips/reproducible-distributed-training.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: CUBLAS_WORKSPACE_CONFIG=:4096:8 NCCL_ALGO=Ring TORCHINDUCTOR_DETERMINISTIC=1 torchrun --standalone --nproc_per_node 2 snippets/reproducible-distributed-training/after.py
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

SEED, GLOBAL_BATCH, STEPS = 0, 16, 3


def make_model():
    torch.manual_seed(SEED)  # the same initial weights at every world size
    return nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 1))


def global_batch(step):
    """The whole batch of a step, from (seed, step) alone: the same for any number of ranks."""
    g = torch.Generator().manual_seed(SEED * 1_000_003 + step)
    return torch.randn(GLOBAL_BATCH, 16, generator=g), torch.randn(GLOBAL_BATCH, 1, generator=g)


def train(steps=STEPS):
    rank, world = dist.get_rank(), dist.get_world_size()
    if GLOBAL_BATCH % world:  # unequal slices would weigh samples differently
        raise ValueError(f"a global batch of {GLOBAL_BATCH} does not split over {world} ranks")
    model = DDP(make_model())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        x, y = global_batch(step)
        x, y = x.chunk(world)[rank], y.chunk(world)[rank]  # this rank's equal slice
        loss = nn.functional.mse_loss(model(x), y)  # DDP averages the slice means: the batch mean
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model.module


def main():
    torch.use_deterministic_algorithms(True)  # deterministic kernels, or an error naming the op
    dist.init_process_group("gloo")  # GPUs: "nccl", and torch.cuda.set_device(local_rank)
    train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
