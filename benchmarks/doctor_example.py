"""The example report of the doctor's page: a real run of the doctor on
benchmarks/doctor/example_train.py (an image classifier with common mistakes), on the CPU.

Runs ``python -m generator doctor --format json example_train.py`` with the default sizes
(3 warm-up steps, 10 timed, 3 profiled), once with the English report and once with the
Chinese one, and writes both to benchmarks/results/doctor-example-cpu.json, which the
doctor's page (docs/doctor.md, docs/doctor.zh.md) shows. One CPU thread, so that the
machine's other load changes the figures less. This is a benchmark, not a test: run it by
hand after changing the doctor's report.

    python benchmarks/doctor_example.py      # about a minute
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from compose_runs import cpu_model  # noqa: E402

FOLDER = ROOT / "benchmarks" / "doctor"
OUTPUT = ROOT / "benchmarks" / "results" / "doctor-example-cpu.json"
RUN = "pytorch-tips doctor example_train.py"


def report(lang: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update(PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    cmd = [sys.executable, "-m", "generator", "doctor", "--quiet", "--format", "json"]
    proc = subprocess.run(
        [*cmd, "--lang", lang, "example_train.py"],
        cwd=FOLDER,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"the doctor failed ({proc.returncode}):\n{proc.stderr}")
    return json.loads(proc.stdout)


def main() -> None:
    import torch

    reports = {lang: report(lang) for lang in ("en", "zh")}
    data = {
        "date": datetime.date.today().isoformat(),
        "cpu": cpu_model(),
        "threads": 1,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "run": RUN,
        "command": "python benchmarks/doctor_example.py",
        "reports": reports,
    }
    tmp = OUTPUT.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    tmp.replace(OUTPUT)
    print(f"wrote {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
