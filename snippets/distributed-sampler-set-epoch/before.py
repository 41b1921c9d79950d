# Call `sampler.set_epoch(epoch)` on a `DistributedSampler` every epoch (before)
# Generated from tips/distributed-sampler-set-epoch.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/distributed-sampler-set-epoch/before.py
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dataset = TensorDataset(torch.arange(16))  # each sample is its own index
# Under torchrun: DistributedSampler(dataset). Rank 0 of a two-process job:
sampler = DistributedSampler(dataset, num_replicas=2, rank=0, shuffle=True, seed=0)
loader = DataLoader(dataset, batch_size=4, sampler=sampler)

epoch_orders = []
for _ in range(3):
    # Missing: sampler.set_epoch(epoch), so every epoch reuses the seed of epoch 0.
    epoch_orders.append([int(i) for (batch,) in loader for i in batch])
