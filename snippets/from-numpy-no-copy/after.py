# Wrap NumPy arrays with `torch.from_numpy` instead of copying them (after)
# Generated from tips/from-numpy-no-copy.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/from-numpy-no-copy/after.py
import numpy as np
import torch

rng = np.random.default_rng(0)
# A preprocessed data set as it comes out of np.load, already in the model's dtype.
features = rng.standard_normal((2048, 64)).astype(np.float32)  # cast once, at load time
labels = rng.integers(0, 10, size=2048)  # int64, what cross_entropy expects

# Both wrap the arrays' existing buffers: no allocation and no copy.
x = torch.from_numpy(features)
y = torch.as_tensor(labels)  # same here; as_tensor copies only when it has to
