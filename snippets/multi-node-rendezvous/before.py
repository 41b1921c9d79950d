# Launch multi-node jobs with torchrun's c10d rendezvous (one torchrun per node), and health-check the world before training (before)
# Generated from tips/multi-node-rendezvous.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/multi-node-rendezvous/before.py
import json
import os
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

dist.init_process_group("gloo", timeout=timedelta(seconds=60))  # GPUs: "nccl"
rank, world = dist.get_rank(), dist.get_world_size()
with open(f"node{os.environ['NODE']}-rank{rank}.json", "w") as f:
    json.dump({"rank": rank, "world": world}, f)
dist.destroy_process_group()
"""
)

# The job has 2 nodes; each runs the single-node command. Here: node 0 of the two.
node = 0
run = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=1", "worker.py"]
subprocess.run(run, cwd=job, env={**os.environ, "NODE": str(node)}, check=True, timeout=120)
report = json.loads((job / f"node{node}-rank0.json").read_text())
print(f"node {node}: rank {report['rank']} of a world of {report['world']}")
