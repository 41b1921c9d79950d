# Feed pre-training from pre-tokenised memory-mapped shards, with EOS-separated documents and a deterministic, resumable window sampler per rank (before)
# Generated from tips/pretraining-data-pipeline.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/pretraining-data-pipeline/before.py
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

EOS, VOCAB, SEQ = 0, 1000, 64


def write_shards(folder, n_shards=2, docs=200):
    """Pre-tokenised shards: every document's ids, then EOS, as uint16."""
    rng = np.random.default_rng(0)
    paths = []
    for s in range(n_shards):
        docs_ids = [np.append(rng.integers(1, VOCAB, rng.integers(20, 120)), EOS) for _ in range(docs)]
        path = Path(folder) / f"shard_{s:03d}.bin"
        np.concatenate(docs_ids).astype(np.uint16).tofile(path)
        paths.append(path)
    return paths


class InMemoryWindows(Dataset):
    def __init__(self, paths):
        tokens = np.concatenate([np.fromfile(p, dtype=np.uint16) for p in paths])  # all of it, in RAM
        self.tokens = torch.from_numpy(tokens.astype(np.int64))
        self.windows = (len(self.tokens) - 1) // SEQ

    def __len__(self):
        return self.windows

    def __getitem__(self, i):
        start = torch.randint(0, len(self.tokens) - SEQ - 1, ()).item()  # a random start
        chunk = self.tokens[start : start + SEQ + 1]
        return chunk[:-1], chunk[1:]


folder = tempfile.mkdtemp()
paths = write_shards(folder)
torch.manual_seed(0)
loader = DataLoader(InMemoryWindows(paths), batch_size=8, shuffle=True)
seen = [x for _, (x, _) in zip(range(3), loader, strict=False)]  # 3 steps, then the job is preempted
