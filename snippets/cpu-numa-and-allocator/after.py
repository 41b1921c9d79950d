# Launch CPU training bound to one NUMA node, with jemalloc or tcmalloc (after)
# Generated from tips/cpu-numa-and-allocator.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/cpu-numa-and-allocator/after.py
import ctypes.util
import os
import shlex
import shutil
from pathlib import Path


def node_cpus(node: int) -> list[int]:
    """CPUs of NUMA node `node` that this process may use (Linux sysfs)."""
    allowed = os.sched_getaffinity(0)
    path = Path(f"/sys/devices/system/node/node{node}/cpulist")
    if not path.exists():  # no NUMA information: treat the machine as one node
        return sorted(allowed)
    cpus = []
    for part in path.read_text().strip().split(","):
        first, _, last = part.partition("-")
        cpus += range(int(first), int(last or first) + 1)
    return [cpu for cpu in cpus if cpu in allowed]


def physical_cores(cpus: list[int]) -> list[int]:
    """One CPU per physical core: hyper-thread siblings share a core's execution units."""
    cores, seen = [], set()
    for cpu in cpus:
        siblings = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
        key = siblings.read_text().strip() if siblings.exists() else str(cpu)
        if key not in seen:
            seen.add(key)
            cores.append(cpu)
    return cores


def find_allocator() -> str | None:
    """jemalloc or tcmalloc if installed (apt: libjemalloc2, libtcmalloc-minimal4)."""
    for name in ("jemalloc", "tcmalloc", "tcmalloc_minimal"):
        if lib := ctypes.util.find_library(name):
            return lib
    return None


def launch_command(argv: list[str], node: int = 0) -> tuple[list[str], dict[str, str]]:
    """Command and environment that run `argv` on the physical cores and memory of `node`."""
    cores = physical_cores(node_cpus(node))
    env = dict(os.environ, OMP_NUM_THREADS=str(len(cores)))  # one thread per core
    if allocator := find_allocator():
        env["LD_PRELOAD"] = ":".join(filter(None, [allocator, os.environ.get("LD_PRELOAD")]))
    cpu_list = ",".join(map(str, cores))
    if shutil.which("numactl"):
        prefix = ["numactl", f"--physcpubind={cpu_list}", f"--membind={node}"]
    elif shutil.which("taskset"):  # binds the cores only; memory follows first touch
        prefix = ["taskset", "-c", cpu_list]
    else:
        prefix = []
    return prefix + argv, env


if __name__ == "__main__":
    argv, env = launch_command(["python", "train.py"])
    extra = {k: env[k] for k in ("OMP_NUM_THREADS", "LD_PRELOAD") if k in env}
    print("launch with:", " ".join(f"{k}={shlex.quote(v)}" for k, v in extra.items()),
          shlex.join(argv))
