# Use the channels_last memory format for convolutional networks (after)
# Generated from tips/channels-last.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/channels-last/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
    nn.Conv2d(16, 32, 3, padding=1),
).to(device, memory_format=torch.channels_last)  # 4D weights become NHWC in memory
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8, 3, 32, 32, device=device)
x = x.to(memory_format=torch.channels_last)  # same shape, NHWC strides

for _ in range(2):
    optimizer.zero_grad(set_to_none=True)
    out = model(x)
    out.square().mean().backward()
    optimizer.step()
