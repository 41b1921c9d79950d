# Bucket variable-length samples so each batch, and each rank, gets similar lengths (after)
# Generated from tips/load-balance-variable-length-batches.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/load-balance-variable-length-batches/after.py
import math

import torch
from torch import nn
from torch.utils.data import DataLoader, Sampler

PAD = 0


class BucketBatchSampler(Sampler[list[int]]):
    """Batches of similar length: shuffle, sort within chunks, cut, shuffle the batches.

    With num_replicas > 1 (DDP), each step's group of batch_size * num_replicas
    similar-length samples is dealt round-robin to the ranks, so every rank gets the
    same amount of work at the same step.
    """

    def __init__(self, lengths, batch_size, num_replicas=1, rank=0, chunk_steps=8, seed=0):
        self.lengths, self.batch_size = list(lengths), batch_size
        self.num_replicas, self.rank = num_replicas, rank
        self.chunk_steps, self.seed, self.epoch = chunk_steps, seed, 0

    def set_epoch(self, epoch):
        self.epoch = epoch  # call every epoch, as with DistributedSampler

    def _groups(self):
        g = torch.Generator().manual_seed(self.seed + self.epoch)  # same on every rank
        order = torch.randperm(len(self.lengths), generator=g).tolist()
        order += order[: -len(order) % self.num_replicas]  # pad to a multiple of the ranks
        step = self.batch_size * self.num_replicas  # samples per step, all ranks together
        chunk = step * self.chunk_steps
        groups = []
        for start in range(0, len(order), chunk):
            part = sorted(order[start:start + chunk], key=self.lengths.__getitem__)
            groups += [part[i:i + step] for i in range(0, len(part), step)]
        return [groups[i] for i in torch.randperm(len(groups), generator=g).tolist()]

    def __iter__(self):
        for group in self._groups():
            yield group[self.rank::self.num_replicas]

    def __len__(self):
        padded = math.ceil(len(self.lengths) / self.num_replicas) * self.num_replicas
        return math.ceil(padded / (self.batch_size * self.num_replicas))


def pad_collate(batch):
    indices, seqs = zip(*batch, strict=True)
    return torch.tensor(indices), nn.utils.rnn.pad_sequence(
        list(seqs), batch_first=True, padding_value=PAD)


g = torch.Generator().manual_seed(0)
lengths = torch.randint(4, 129, (512,), generator=g).tolist()
dataset = [(i, torch.randint(1, 1000, (n,), generator=g)) for i, n in enumerate(lengths)]

# Under DDP: BucketBatchSampler(lengths, 16, num_replicas=world_size, rank=rank)
sampler = BucketBatchSampler(lengths, batch_size=16)
loader = DataLoader(dataset, batch_sampler=sampler, collate_fn=pad_collate)
seen, padding = [], 0
for indices, tokens in loader:
    seen += indices.tolist()
    padding += (tokens == PAD).sum().item()
