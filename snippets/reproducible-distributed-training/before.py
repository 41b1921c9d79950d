# Determinism at scale: repeat a distributed run bit for bit, and match it across world sizes up to rounding (before)
# Generated from tips/reproducible-distributed-training.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/reproducible-distributed-training/before.py
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

SEED, BATCH_PER_RANK, STEPS = 0, 8, 3


def make_model():
    torch.manual_seed(SEED)
    return nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 1))


def train(steps=STEPS):
    model = DDP(make_model())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(SEED + dist.get_rank())  # each rank draws its own stream of data
    for _ in range(steps):
        # 8 samples per rank: the global batch, and its samples, change with the world size.
        x, y = torch.randn(BATCH_PER_RANK, 16), torch.randn(BATCH_PER_RANK, 1)
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model.module


def main():
    torch.use_deterministic_algorithms(True)
    dist.init_process_group("gloo")  # GPUs: "nccl", and torch.cuda.set_device(local_rank)
    train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
