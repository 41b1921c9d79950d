# Feed pre-training from pre-tokenised memory-mapped shards, with EOS-separated documents and a deterministic, resumable window sampler per rank (after)
# Generated from tips/pretraining-data-pipeline.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/pretraining-data-pipeline/after.py
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, Sampler

EOS, VOCAB, SEQ = 0, 1000, 64


def write_shards(folder, n_shards=2, docs=200):
    """Pre-tokenised shards: every document's ids, then EOS, as uint16 (uint32 above 65,536 ids)."""
    rng = np.random.default_rng(0)
    paths = []
    for s in range(n_shards):
        docs_ids = [np.append(rng.integers(1, VOCAB, rng.integers(20, 120)), EOS) for _ in range(docs)]
        path = Path(folder) / f"shard_{s:03d}.bin"
        np.concatenate(docs_ids).astype(np.uint16).tofile(path)
        paths.append(path)
    return paths


class TokenWindows(Dataset):
    """Windows of SEQ + 1 tokens over memory-mapped shards, opened lazily in each process."""

    def __init__(self, paths, dtype=np.uint16):
        self.paths, self.dtype = [str(p) for p in paths], dtype
        sizes = [Path(p).stat().st_size // np.dtype(dtype).itemsize for p in self.paths]
        self.starts = np.cumsum([0, *sizes])  # where each shard begins in the stream
        self.windows = (int(self.starts[-1]) - 1) // SEQ
        self._maps = None

    def __len__(self):
        return self.windows

    def _shards(self):
        if self._maps is None:  # first use in this process: map the files, read nothing yet
            self._maps = [np.memmap(p, dtype=self.dtype, mode="r") for p in self.paths]
        return self._maps

    def __getstate__(self):  # a worker gets the paths, never the tokens
        return {**self.__dict__, "_maps": None}

    def __getitem__(self, i):
        lo, hi = i * SEQ, i * SEQ + SEQ + 1
        first = int(np.searchsorted(self.starts, lo, side="right")) - 1
        parts, shards = [], self._shards()
        for s in range(first, len(shards)):  # a window may span two shards
            if self.starts[s] >= hi:
                break
            parts.append(shards[s][max(lo - self.starts[s], 0) : hi - self.starts[s]])
        chunk = torch.from_numpy(np.concatenate(parts).astype(np.int64))
        return chunk[:-1], chunk[1:]


class ResumableWindowSampler(Sampler):
    """Epoch order = permutation(seed + epoch); rank r takes every world-th window."""

    def __init__(self, n, rank=0, world=1, seed=0):
        self.n, self.rank, self.world, self.seed = n, rank, world, seed
        self.epoch, self.position = 0, 0  # the whole state: save it with the checkpoint

    def __iter__(self):
        order = torch.randperm(self.n, generator=torch.Generator().manual_seed(self.seed + self.epoch))
        mine = order[self.rank : self.n - self.n % self.world : self.world].tolist()
        while self.position < len(mine):
            self.position += 1
            yield mine[self.position - 1]
        self.epoch, self.position = self.epoch + 1, 0

    def __len__(self):
        return self.n // self.world

    def state_dict(self):
        return {"epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state):
        self.epoch, self.position = state["epoch"], state["position"]


def document_ids(tokens):
    """Per position: how many documents ended before it (EOS is the last token of its document)."""
    ended = (tokens == EOS).long()
    return ended.cumsum(-1) - ended


folder = tempfile.mkdtemp()
paths = write_shards(folder)
dataset = TokenWindows(paths)
sampler = ResumableWindowSampler(len(dataset), rank=0, world=2, seed=0)
loader = DataLoader(dataset, batch_size=8, sampler=sampler)  # num_workers > 0 in real runs
seen = []
for step, (x, y) in enumerate(loader):
    seen.append(x)  # ... model(x), loss against y, backward, step ...
    assert y.shape == x.shape
    if step == 2:  # 3 steps, then the job is preempted: this goes into the checkpoint
        # The position the loop consumed; with workers the sampler itself runs ahead by
        # the prefetched batches, so count consumed samples, as in the exact-resume tip.
        state = {"epoch": sampler.epoch, "position": (step + 1) * loader.batch_size}
        break
