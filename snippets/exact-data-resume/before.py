# Save the data position with the checkpoint, so a resumed run sees the same batches (before)
# Generated from tips/exact-data-resume.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/exact-data-resume/before.py
import io

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

SEED, BATCH, EPOCHS = 0, 4, 2
dataset = TensorDataset(torch.randn(40, 3), torch.arange(40))


def make_run(num_workers=0):
    """What a fresh process builds: model, optimizer, loader."""
    torch.manual_seed(SEED)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    # shuffle=True draws each epoch's order from the global generator
    loader = DataLoader(dataset, batch_size=BATCH, shuffle=True, num_workers=num_workers)
    return model, optimizer, loader


def train(model, optimizer, loader, checkpoint=None, stop_after=None):
    """Train EPOCHS epochs, or stop after `stop_after` batches and return a checkpoint."""
    start_epoch = 0
    if checkpoint is not None:
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_epoch = checkpoint["epoch"]  # the interrupted epoch starts over
    seen = []
    for epoch in range(start_epoch, EPOCHS):
        for x, index in loader:
            loss = model(x).square().mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            seen.append(index.tolist())
            if len(seen) == stop_after:
                return seen, {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                              "epoch": epoch}
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
