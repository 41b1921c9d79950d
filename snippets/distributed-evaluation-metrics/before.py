# Evaluate on several ranks without counting the sampler's repeats: sum token losses and counts, all-reduce the sums, gather per-sample results in order (before)
# Generated from tips/distributed-evaluation-metrics.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/distributed-evaluation-metrics/before.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DataLoader, DistributedSampler

VOCAB, WIDTH, PAD = 32, 16, -100


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm, self.mlp = nn.LayerNorm(WIDTH), nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        return x + self.mlp(self.norm(x))


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(VOCAB, WIDTH), Block(), Block(), nn.Linear(WIDTH, VOCAB))


class Sequences(torch.utils.data.Dataset):
    """13 sequences with 3 to 16 real tokens, the rest padding (target PAD)."""

    def __len__(self):
        return 13

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        tokens = torch.randint(0, VOCAB, (17,), generator=g)
        targets = tokens[1:].clone()
        targets[int(torch.randint(3, 17, (), generator=g)):] = PAD
        return index, tokens[:-1], targets


def evaluate(model, dataset, rank, world):
    sampler = DistributedSampler(dataset, world, rank, shuffle=False)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)
    model.eval()
    losses = []
    with torch.no_grad():
        for _, tokens, targets in loader:
            logits = model(tokens).float()  # FSDP2 gathers every block's weights again, every batch
            losses.append(F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=PAD))
    model.train()
    loss = torch.stack(losses).mean()  # a mean of batch means, repeats included
    dist.all_reduce(loss)
    return torch.exp(loss / world).item()  # and a mean of rank means


dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
model = make_model()
for block in model[1:3]:
    fully_shard(block)
fully_shard(model)

dataset = Sequences()
perplexity = evaluate(model, dataset, rank, world)
if rank == 0:
    print(f"perplexity {perplexity:.3f}")
dist.destroy_process_group()
