# Evaluate on several ranks without counting the sampler's repeats: sum token losses and counts, all-reduce the sums, gather per-sample results in order (after)
# Generated from tips/distributed-evaluation-metrics.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/distributed-evaluation-metrics/after.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.fsdp import FSDPModule, fully_shard
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
    """Perplexity over every token of `dataset` and each sample's mean loss, in dataset order."""
    sampler = DistributedSampler(dataset, world, rank, shuffle=False)  # pads to equal shares
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)
    model.eval()
    model.set_reshard_after_forward(False)  # FSDP2: gather the weights once, not every batch
    totals = torch.zeros(2, dtype=torch.float64)  # summed token loss, number of tokens
    per_sample = torch.zeros(sampler.num_samples)
    local = []  # (index, mean loss) of this rank's real samples
    seen = 0
    with torch.no_grad():
        for index, tokens, targets in loader:
            logits = model(tokens).float()
            nll = F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=PAD, reduction="none")
            real = targets != PAD
            # Entry rank + i * world of the padded index list; past the dataset it is a repeat.
            position = rank + world * torch.arange(seen, seen + len(index))
            keep = (position < len(dataset)).unsqueeze(1) & real
            totals += torch.stack([nll[keep].sum(), keep.sum()]).double()
            mean = nll.sum(1) / real.sum(1)
            per_sample[seen : seen + len(index)] = mean
            for i, value, pos in zip(index.tolist(), mean.tolist(), position.tolist(), strict=True):
                if pos < len(dataset):
                    local.append((i, value))
            seen += len(index)
    for module in model.modules():  # free the gathered weights and restore the training setting
        if isinstance(module, FSDPModule):
            module.reshard()
    model.set_reshard_after_forward(True)
    model.train()

    dist.all_reduce(totals)  # sums, not means: exact whatever the world size
    gathered = torch.empty(world * sampler.num_samples)
    dist.all_gather_single(gathered, per_sample)  # every rank's share, rank after rank
    in_order = gathered.view(world, -1).T.flatten()[: len(dataset)]  # dataset order, repeats dropped
    return torch.exp(totals[0] / totals[1]).item(), in_order, local


dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
model = make_model()
for block in model[1:3]:
    fully_shard(block)
fully_shard(model)

dataset = Sequences()
perplexity, sample_losses, local = evaluate(model, dataset, rank, world)

# Python objects of any size (generated text, per-sample records): gather them on rank 0 only.
every_rank = [None] * world if rank == 0 else None
dist.gather_object(local, every_rank, dst=0)
if rank == 0:
    table = sorted(record for part in every_rank for record in part)  # (index, loss), N rows
    print(f"perplexity {perplexity:.3f} over {len(table)} samples")
dist.destroy_process_group()
