# Create tensors with `dtype=` and `device=`, not legacy types such as `torch.cuda.FloatTensor` (before)
# Generated from tips/legacy-tensor-types.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/legacy-tensor-types/before.py
import torch

cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor  # dtype and device in a class

torch.manual_seed(0)
images = torch.rand(4, 3, 8, 8)
real = images.type(Tensor)  # a cast and, on a GPU, a copy, in one call
valid = Tensor(images.size(0), 1).fill_(1.0)  # sizes, then filled
label = torch.LongTensor(3)  # meant as the class id 3
