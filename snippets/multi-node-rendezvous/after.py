# Launch multi-node jobs with torchrun's c10d rendezvous (one torchrun per node), and health-check the world before training (after)
# Generated from tips/multi-node-rendezvous.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/multi-node-rendezvous/after.py
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

job = Path(tempfile.mkdtemp(prefix="job-"))  # the job's directory (on a cluster: shared storage)
(job / "worker.py").write_text(
    """
import json, os
from datetime import timedelta

import torch
import torch.distributed as dist

# Health check, before data and model: the whole world formed, every rank reachable, every
# node on the same software and seeing its GPUs. Every rank sees the same reports, so all
# of them stop together, at once, with a message.
dist.init_process_group("gloo", timeout=timedelta(seconds=60))  # GPUs: "nccl"
rank, world = dist.get_rank(), dist.get_world_size()
gpus_per_node = int(os.environ["LOCAL_WORLD_SIZE"])
expected = int(os.environ["EXPECTED_NODES"]) * gpus_per_node  # from the scheduler (SLURM_NNODES)
ones = torch.ones(1)
dist.all_reduce(ones)
reports = [None] * world
node = {"node": int(os.environ["GROUP_RANK"]), "torch": torch.__version__, "gpus": torch.cuda.device_count()}
dist.all_gather_object(reports, node)
problems = []
if world != expected:
    problems.append(f"a world of {world}, but the scheduler allocated {expected} ranks")
if ones.item() != world:
    problems.append("not every rank took part in the all-reduce")
if len({r["torch"] for r in reports}) > 1:
    problems.append("the nodes run different torch versions")
if torch.cuda.is_available() and min(r["gpus"] for r in reports) < gpus_per_node:
    problems.append("a node sees fewer GPUs than it runs ranks")
if problems:
    raise SystemExit("health check failed: " + "; ".join(problems))
with open(f"rank{rank}.json", "w") as f:
    json.dump({"rank": rank, "world": world, "run": os.environ["TORCHELASTIC_RUN_ID"], "reports": reports}, f)
# ... build the model, load the data, train ...
dist.destroy_process_group()
"""
)

with socket.socket() as s:  # a free port for the rendezvous (on a cluster: 29400 on the head node)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
NODES = 2
run = [
    sys.executable, "-m", "torch.distributed.run",  # = torchrun
    f"--nnodes={NODES}", "--nproc_per_node=1",
    "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}", "--rdzv-id=job-42",
    "worker.py",
]  # fmt: skip
env = {**os.environ, "EXPECTED_NODES": str(NODES)}
nodes = [subprocess.Popen(run, cwd=job, env=env) for _ in range(NODES)]  # one agent per "node"
try:
    codes = [node.wait(timeout=120) for node in nodes]
finally:
    for node in nodes:
        if node.poll() is None:  # a node still waiting for the others: stop it
            node.kill()
reports = [json.loads((job / f"rank{r}.json").read_text()) for r in range(NODES)]
print(f"exit codes {codes}; ranks {[r['rank'] for r in reports]} of a world of {reports[0]['world']}")
