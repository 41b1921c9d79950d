# Save the data position with the checkpoint, so a resumed run sees the same batches (after)
# Generated from tips/exact-data-resume.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/exact-data-resume/after.py
import io

import torch
from torch import nn
from torch.utils.data import DataLoader, Sampler, TensorDataset

SEED, BATCH, EPOCHS = 0, 4, 2


class ResumableRandomSampler(Sampler[int]):
    """A seeded permutation per epoch that can start part-way through the epoch."""

    def __init__(self, num_samples, seed):
        self.num_samples, self.seed = num_samples, seed
        self.epoch, self.start = 0, 0

    def set_epoch(self, epoch, start=0):
        self.epoch, self.start = epoch, start  # start: samples already consumed this epoch

    def __iter__(self):
        g = torch.Generator().manual_seed(self.seed + self.epoch)  # same order for (seed, epoch)
        order = torch.randperm(self.num_samples, generator=g)
        yield from order[self.start:].tolist()  # the skipped samples are never loaded

    def __len__(self):
        return self.num_samples - self.start


dataset = TensorDataset(torch.randn(40, 3), torch.arange(40))


def make_run(num_workers=0):
    """What a fresh process builds: model, optimizer, sampler, loader."""
    torch.manual_seed(SEED)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sampler = ResumableRandomSampler(len(dataset), SEED)
    loader = DataLoader(dataset, batch_size=BATCH, sampler=sampler, num_workers=num_workers)
    return model, optimizer, sampler, loader


def train(model, optimizer, sampler, loader, checkpoint=None, stop_after=None):
    """Train EPOCHS epochs, or stop after `stop_after` batches and return a checkpoint."""
    start_epoch, done = 0, 0  # done: batches the loop has consumed in this epoch
    if checkpoint is not None:
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_epoch, done = checkpoint["data"]["epoch"], checkpoint["data"]["batches_done"]
    seen = []
    for epoch in range(start_epoch, EPOCHS):
        sampler.set_epoch(epoch, start=done * BATCH)  # resume inside the epoch
        for x, index in loader:
            loss = model(x).square().mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            seen.append(index.tolist())
            done += 1  # counted by the loop: workers may have fetched further ahead
            if len(seen) == stop_after:
                return seen, {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                              "data": {"epoch": epoch, "batches_done": done}}
        done = 0
    return seen, None


if __name__ == "__main__":
    reference = make_run()
    uninterrupted, _ = train(*reference)

    # The same run, killed in the middle of the second epoch and resumed from its checkpoint.
    first_part, checkpoint = train(*make_run(), stop_after=13)
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    buffer.seek(0)
    restored = torch.load(buffer, weights_only=True)
    resumed = make_run()  # a fresh process rebuilds everything, then loads the checkpoint
    second_part, _ = train(*resumed, checkpoint=restored)
    resumed_run = first_part + second_part
