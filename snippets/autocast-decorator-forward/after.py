# Put autocast on the model's forward when the forward may run in another thread (after)
# Generated from tips/autocast-decorator-forward.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/autocast-decorator-forward/after.py
import threading

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
if device == "cpu" or torch.cuda.get_device_capability()[0] >= 8:
    dtype = torch.bfloat16
else:
    dtype = torch.float16


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.head = nn.Linear(64, 4)
        self.temperature = nn.Linear(64, 1)

    @torch.amp.autocast(device_type=device, dtype=dtype)
    def forward(self, x):
        h = self.body(x)  # runs in bf16/fp16
        logits = self.head(h)
        with torch.amp.autocast(device_type=device, enabled=False):
            # A sensitive branch in float32: nothing is cast here, so cast the input.
            scale = torch.exp(self.temperature(h.float()))
        return logits, scale


torch.manual_seed(0)
model = Classifier().to(device)
x = torch.randn(16, 32, device=device)

logits, scale = model(x)  # no autocast block needed at the call site
side_outputs = []
worker = threading.Thread(target=lambda: side_outputs.append(model(x)))
worker.start()
worker.join()
