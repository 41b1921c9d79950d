# Create tensors with `dtype=` and `device=`, not legacy types such as `torch.cuda.FloatTensor` (after)
# Generated from tips/legacy-tensor-types.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/legacy-tensor-types/after.py
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # chosen once

torch.manual_seed(0)
images = torch.rand(4, 3, 8, 8)
real = images.to(device, torch.float32)  # the move and the dtype, both visible
valid = torch.ones(images.size(0), 1, device=device)  # made where it is used
label = torch.tensor(3, device=device)  # the class id 3
