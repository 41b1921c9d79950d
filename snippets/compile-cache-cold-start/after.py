# Keep torch.compile's caches across restarts, and ship them with save_cache_artifacts (after)
# Generated from tips/compile-cache-cold-start.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/compile-cache-cold-start/after.py
import json
import os
import subprocess
import sys
import tempfile
import textwrap

# One "job": a fresh Python process that compiles a function with the default backend
# (Inductor), runs it, and reports how long the first call took and what the caches said.
WORKER = textwrap.dedent(
    """
    import json, sys, time
    import torch
    from torch._dynamo.utils import compilation_time_metrics, counters

    load_from, save_to = sys.argv[1:3]
    if load_from:  # a mega-cache made elsewhere: fill this machine's caches before compiling
        with open(load_from, "rb") as f:
            torch.compiler.load_cache_artifacts(f.read())

    @torch.compile
    def scaled_gelu(x):
        return torch.nn.functional.gelu(x) * 0.5 + x

    device = "cuda" if torch.cuda.is_available() else "cpu"
    start = time.perf_counter()
    scaled_gelu(torch.randn(4096, device=device))
    seconds = time.perf_counter() - start
    if save_to:  # everything this process compiled, as one blob to copy elsewhere
        artifact_bytes, _cache_info = torch.compiler.save_cache_artifacts()
        with open(save_to, "wb") as f:
            f.write(artifact_bytes)
    print(json.dumps({
        "seconds": seconds,
        "dynamo_graphs": counters["stats"]["unique_graphs"],
        "fxgraph_hit": counters["inductor"]["fxgraph_cache_hit"],
        "fxgraph_miss": counters["inductor"]["fxgraph_cache_miss"],
        "aotautograd_hit": counters["aot_autograd"]["autograd_cache_hit"],
        # seconds Inductor spent generating and compiling code in this process
        "codegen_seconds": sum(compilation_time_metrics.get("fx_codegen_and_compile", [])),
    }))
    """
)


def run_job(cache_dir, load_from="", save_to=""):
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache_dir, TORCHINDUCTOR_COMPILE_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", WORKER, load_from, save_to],
        env=env, capture_output=True, text=True, check=True, timeout=600,
    )
    return json.loads(done.stdout.splitlines()[-1])


with tempfile.TemporaryDirectory() as shared_cache, tempfile.TemporaryDirectory() as elsewhere:
    # TORCHINDUCTOR_CACHE_DIR on storage that outlives the job (here: a temp dir we keep).
    artifacts = os.path.join(elsewhere, "mega_cache.bin")
    cold = run_job(shared_cache, save_to=artifacts)  # first job: compiles everything
    restarted = run_job(shared_cache)  # a new process, same cache dir
    # Another machine: an empty cache dir, warmed from the saved artifacts only.
    moved = run_job(os.path.join(elsewhere, "empty_cache"), load_from=artifacts)
print(f"first call: cold {cold['seconds']:.1f} s, restarted {restarted['seconds']:.1f} s, "
      f"moved {moved['seconds']:.1f} s")
