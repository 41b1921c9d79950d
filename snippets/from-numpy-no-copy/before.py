# Wrap NumPy arrays with `torch.from_numpy` instead of copying them (before)
# Generated from tips/from-numpy-no-copy.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/from-numpy-no-copy/before.py
import numpy as np
import torch

rng = np.random.default_rng(0)
# A preprocessed data set as it comes out of np.load, already in the model's dtype.
features = rng.standard_normal((2048, 64)).astype(np.float32)
labels = rng.integers(0, 10, size=2048)  # int64, what cross_entropy expects

# torch.tensor always allocates a second buffer and copies the data into it.
x = torch.tensor(features)
y = torch.tensor(labels)
