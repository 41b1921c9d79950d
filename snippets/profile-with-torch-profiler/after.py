# Profile a few steady-state steps with torch.profiler (after)
# Generated from tips/profile-with-torch-profiler.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/profile-with-torch-profiler/after.py
import os
import tempfile

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 32, device=device)
y = torch.randn(16, 1, device=device)

activities = [ProfilerActivity.CPU]
if device == "cuda":
    activities.append(ProfilerActivity.CUDA)

trace_dir = tempfile.TemporaryDirectory(prefix="torch-profile-")  # use a real folder in practice
trace_files = []


def save_trace(prof):
    path = os.path.join(trace_dir.name, f"trace_step{prof.step_num}.json")
    prof.export_chrome_trace(path)  # open in ui.perfetto.dev or chrome://tracing
    trace_files.append(path)


with profile(
    activities=activities,
    schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
    on_trace_ready=save_trace,
) as prof:
    for _ in range(5):
        with record_function("forward"):
            loss = nn.functional.mse_loss(model(x), y)
        with record_function("backward"):
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
        with record_function("optimizer_step"):
            optimizer.step()
        prof.step()  # advance the schedule

# "self_cuda_time_total" is the deprecated name of self_device_time_total.
sort_by = "self_device_time_total" if device == "cuda" else "self_cpu_time_total"
print(prof.key_averages().table(sort_by=sort_by, row_limit=8))
