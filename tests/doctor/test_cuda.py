"""Detections that need a CUDA GPU: TF32 off, GPU idle time, copies from pageable memory and
an explicit cudaStreamSynchronize. Each test skips, with the reason, where there is none."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.doctor.runs import FAST, doctor, no_traceback

LOOP = """
import time
import torch
from torch import nn

model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
for step in range(1000):
{body}
    loss = model(x).square().mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""


@functools.cache
def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _run(tmp_path: Path, body: str) -> dict:
    if not _cuda():
        pytest.skip("needs a CUDA GPU")
    script = tmp_path / "train.py"
    script.write_text(LOOP.format(body=body), encoding="utf-8")
    run = doctor(*FAST, "--format", "json", "--no-lint", "train.py", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    no_traceback(run)
    assert run.report["device"] == "cuda"
    return run.report


def _kinds(report: dict) -> dict[str, dict]:
    return {f["kind"]: f for f in report["findings"]}


def test_fp32_matmuls_without_tf32(tmp_path: Path) -> None:
    import torch

    if _cuda() and torch.cuda.get_device_capability() < (8, 0):
        pytest.skip("TF32 needs an Ampere or newer GPU")
    report = _run(tmp_path, '    x = torch.randn(256, 1024, device="cuda")')
    found = _kinds(report)["tf32_off"]
    assert found["tip"] == "tf32-matmul" and found["severity"] == "warning"


def test_gpu_idle_while_the_host_works(tmp_path: Path) -> None:
    body = "    time.sleep(0.02)  # host-side work the GPU waits for\n"
    body += '    x = torch.randn(256, 1024, device="cuda")'
    report = _run(tmp_path, body)
    idle = _kinds(report)["gpu_idle"]
    assert idle["tip"] == "cuda-graphs-reduce-overhead" and idle["share"] > 0.5
    assert report["gpu_idle_s"] > 0.015


def test_copies_from_pageable_memory(tmp_path: Path) -> None:
    body = '    x = torch.randn(4096, 1024).to("cuda")  # pageable host memory'
    report = _run(tmp_path, body)
    found = _kinds(report)["pageable_copy"]
    assert found["tip"] == "pin-memory-non-blocking"
    assert found["evidence"].startswith("1 copies a step")


def test_cuda_stream_synchronize_names_its_line(tmp_path: Path) -> None:
    body = '    x = torch.randn(256, 1024, device="cuda")\n'
    body += "    torch.cuda.current_stream().synchronize()  # planted"
    report = _run(tmp_path, body)
    syncs = [f for f in report["findings"] if f["kind"] == "sync"]
    line = (
        LOOP.format(body=body)
        .splitlines()
        .index("    torch.cuda.current_stream().synchronize()  # planted")
        + 1
    )
    assert any(f["line"] == line and "cudaStreamSynchronize" in f["evidence"] for f in syncs), syncs
