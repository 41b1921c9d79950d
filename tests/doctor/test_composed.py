"""The composed train.py (conv net and GPT, default flags, CPU): no error, no warning.

What may remain are ``info`` findings: AdamW's for-loop, PyTorch's default for parameters
on the CPU (the composer applies ``fused=True`` only with ``--fused-optimizer``), which takes
1-3% of a step on an idle machine, under the 5% from which the doctor reports a time
finding, and more on a loaded one; and, in the GPT script, the one read per step of its
non-finite guard (a step whose gradient norm is not finite is skipped before
``optimizer.step()``, the same read ``GradScaler.step`` makes), which the doctor reports
as info on the CPU. FLOP/s are in the report's figures, not a finding (an
MFU finding needs a GPU with a known peak), and the lint finds nothing.

The doctor runs in this process, after the planted scripts of the other tests where they
share a worker: the compiled one's graph breaks are not this run's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.doctor.runs import FAST, in_process, no_traceback

pytestmark = pytest.mark.xdist_group("doctor")  # in this process, with the other runs


@pytest.mark.parametrize("model", ["convnet", "gpt"])
def test_composed_script_has_no_error_or_warning(model: str, tmp_path: Path) -> None:
    from generator.compose.script import ComposeOptions, compose, read_tips_by_feature

    script = tmp_path / "train.py"
    script.write_text(compose(ComposeOptions(model=model), read_tips_by_feature()), "utf-8")
    run = in_process(*FAST, "--format", "json", str(script), "--out", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr
    no_traceback(run)
    report = run.report
    assert report["outcome"] == "stopped" and report["steps"] == 3
    assert len(report["profiled_steps"]) == 3
    serious = [f for f in report["findings"] if f["severity"] in ("error", "warning")]
    assert serious == []
    allowed = {"optimizer_loop", "sync"} if model == "gpt" else {"optimizer_loop"}
    assert {f["kind"] for f in report["findings"]} <= allowed  # see the docstring
    for f in report["findings"]:
        if f["kind"] == "sync":  # the guard's read, once a step, and nothing else
            assert f["severity"] == "info", f
            assert "isfinite" in Path(f["path"]).read_text("utf-8").splitlines()[f["line"] - 1]
    assert report["flops_per_step"] > 0 and report["peak_memory_bytes"] > 0
