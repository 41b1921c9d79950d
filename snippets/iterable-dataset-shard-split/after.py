# Split an IterableDataset's shards across ranks × workers, so each sample is read once per epoch (after)
# Generated from tips/iterable-dataset-shard-split.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/iterable-dataset-shard-split/after.py
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

NUM_SHARDS, SHARD_SIZE = 8, 6  # e.g. 8 tar/parquet files of 6 records each


def read_shard(shard):
    """Stand-in for reading one shard file: yields (features, label, key) records."""
    for offset in range(SHARD_SIZE):
        key = shard * SHARD_SIZE + offset
        g = torch.Generator().manual_seed(key)
        yield torch.randn(8, generator=g), torch.randint(0, 4, (), generator=g), key


class ShardStream(IterableDataset):
    def __init__(self, num_shards, seed=0):
        self.num_shards, self.seed, self.epoch = num_shards, seed, 0
        # Read the rank here, in the training process: a worker started with spawn or
        # forkserver has no process group.
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        info = get_worker_info()  # None when the main process reads (num_workers=0)
        worker, num_workers = (info.id, info.num_workers) if info else (0, 1)
        reader = self.rank * num_workers + worker  # this (rank, worker) pair...
        readers = self.world_size * num_workers  # ...out of all readers of the job
        if self.num_shards % readers:
            raise ValueError(f"{self.num_shards} shards do not split evenly over {readers} readers")
        # Every rank computes the same order from (seed, epoch); each reader keeps its slice.
        g = torch.Generator().manual_seed(self.seed + self.epoch)
        order = torch.randperm(self.num_shards, generator=g).tolist()
        for shard in order[reader::readers]:
            yield from read_shard(shard)


def build_loader():
    dataset = ShardStream(NUM_SHARDS)
    return dataset, DataLoader(dataset, batch_size=4, num_workers=2)


def main():
    dist.init_process_group("gloo")  # GPUs: "nccl", and torch.cuda.set_device(local_rank)
    torch.manual_seed(0)
    model = DDP(nn.Linear(8, 4))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    dataset, loader = build_loader()
    for epoch in range(2):
        dataset.set_epoch(epoch)  # reaches the workers: they get a fresh copy each epoch
        for x, y, _ in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
