# Put autocast on the model's forward when the forward may run in another thread (before)
# Generated from tips/autocast-decorator-forward.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/autocast-decorator-forward/before.py
import threading

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
if device == "cpu" or torch.cuda.get_device_capability()[0] >= 8:
    dtype = torch.bfloat16
else:
    dtype = torch.float16

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
x = torch.randn(16, 32, device=device)

side_outputs = []
with torch.amp.autocast(device, dtype=dtype):
    main_output = model(x)
    # nn.DataParallel runs each replica's forward in a worker thread, like this one.
    worker = threading.Thread(target=lambda: side_outputs.append(model(x)))
    worker.start()
    worker.join()
