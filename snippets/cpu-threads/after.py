# Give each CPU training process its own share of the physical cores (after)
# Generated from tips/cpu-threads.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/cpu-threads/after.py
import os

import torch
from torch import nn

PROCESSES_PER_MACHINE = 2  # torchrun exports LOCAL_WORLD_SIZE; 2 for this demo
LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))


def usable_cpus() -> list[int]:
    """CPUs this process may run on: respects taskset, numactl and container cpusets."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))  # macOS, Windows


def physical_cores(cpus: list[int]) -> list[int]:
    """One CPU per physical core: hyper-thread siblings share a core's execution units."""
    cores, seen = [], set()
    for cpu in cpus:
        try:
            with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list") as f:
                siblings = f.read().strip()
        except OSError:  # no sysfs: count every CPU as a core
            siblings = str(cpu)
        if siblings not in seen:
            seen.add(siblings)
            cores.append(cpu)
    return cores


# Inter-op pool first: it can be set once, and only before any parallel work starts.
torch.set_num_interop_threads(1)
# Intra-op pool: this process's share of the physical cores, never less than one.
threads = max(1, len(physical_cores(usable_cpus())) // PROCESSES_PER_MACHINE)
torch.set_num_threads(threads)

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10))
x = torch.randn(64, 256)
loss = model(x).logsumexp(dim=1).mean()
loss.backward()
