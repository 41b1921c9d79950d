# Train in mixed precision with autocast around the forward pass and the loss (after)
# Generated from tips/autocast-mixed-precision.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/autocast-mixed-precision/after.py
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
# bf16 on CPU and on Ampere or newer GPUs; fp16 on older GPUs.
if device == "cpu" or torch.cuda.get_device_capability()[0] >= 8:
    dtype = torch.bfloat16
else:
    dtype = torch.float16

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
# Loss scaling is only needed for fp16; for bf16 the disabled scaler passes values through.
scaler = torch.amp.GradScaler(device, enabled=(dtype == torch.float16))
x = torch.randn(64, 32, device=device)
y = torch.randint(0, 4, (64,), device=device)

for _ in range(3):
    optimizer.zero_grad(set_to_none=True)
    with torch.amp.autocast(device, dtype=dtype):
        logits = model(x)  # linear layers run in bf16/fp16
        loss = nn.functional.cross_entropy(logits, y)  # autocast keeps this in float32
    scaler.scale(loss).backward()  # outside autocast: backward reuses the forward dtypes
    scaler.step(optimizer)  # unscales the gradients (fp16) and skips inf/NaN steps
    scaler.update()
