"""Each planted problem is found, with the right tip and the right line (CPU).

The doctor runs in this process (`report_of`), once a script for the session."""

from __future__ import annotations

import pytest

from tests.doctor.runs import no_traceback, planted, report_of

pytestmark = pytest.mark.xdist_group("doctor")  # one worker: one import of torch, one run


def _measured(run, kind: str) -> dict:  # type: ignore[no-untyped-def]
    assert run.returncode == 0, run.stderr
    no_traceback(run)
    found = run.findings(kind)
    assert found, [f["kind"] for f in run.report["findings"]]
    return found[0]


def test_a_data_bound_loop_is_the_top_finding_with_its_share() -> None:
    run = report_of("data_bound.py", "--no-lint")
    first = run.report["findings"][0]
    assert first["kind"] == "data_wait", run.report["findings"]
    assert first["tip"] == "dataloader-num-workers"
    # 8 samples of 2 ms each a step, against a linear layer's microseconds.
    assert first["share"] > 0.5
    assert first["share"] == _measured(run, "data_wait")["share"]
    assert first["line"] == planted("data_bound.py", "data_wait")
    assert "num_workers=0" in first["evidence"]
    breakdown = run.report["breakdown"]
    assert breakdown["data"] > breakdown["forward"] + breakdown["backward"]


def test_an_item_reached_through_a_helper_names_the_helpers_line() -> None:
    run = report_of("item_helper.py", "--no-lint")
    sync = _measured(run, "sync")
    assert sync["tip"] == "avoid-cpu-gpu-syncs"
    assert (sync["path"], sync["line"]) == ("item_helper.py", planted("item_helper.py", "sync"))
    assert sync["evidence"].startswith("1 sync(s) a step")
    assert "×" not in sync["evidence"]  # one op: named, with no count over the profiled steps
    # torch's own .item() inside the optimizer is not a sync of the user's
    assert len(run.findings("sync")) == 1


def test_foreach_false_adam_is_the_for_loop_optimizer() -> None:
    run = report_of("foreach_false.py", "--no-lint")
    loop = _measured(run, "optimizer_loop")
    assert loop["tip"] == "fused-optimizers"
    assert loop["line"] == planted("foreach_false.py", "optimizer_loop")
    assert "foreach=False" in loop["evidence"] and "48 parameter tensors" in loop["evidence"]
    assert loop["severity"] in ("warning", "error")
    assert run.report["optimizers"][0]["foreach"] is False


def test_zero_grad_set_to_none_false_is_found_at_its_call() -> None:
    run = report_of("zero_grad_fill.py")  # with the lint: test_report reads it too
    fill = _measured(run, "zero_grad_fill")
    assert fill["tip"] == "zero-grad-set-to-none"
    assert fill["line"] == planted("zero_grad_fill.py", "zero_grad_fill")
    # 64*256 + 256 + 256*64 + 64 float32 gradients
    assert "129 KiB" in fill["evidence"]


def test_a_loss_history_keeping_its_graph_grows_and_names_the_append() -> None:
    run = report_of("loss_history.py", "--no-lint")
    kept = _measured(run, "graph_kept")
    assert kept["tip"] == "detach-summary-statistics"
    assert kept["line"] == planted("loss_history.py", "graph_kept")
    assert "`history`" in kept["evidence"] and "MeanBackward0" in kept["evidence"]
    assert run.report["memory"]["growth_bytes_per_step"] > 0
    allocated = [s["allocated_bytes"] for s in run.report["profiled_steps"]]
    assert allocated == sorted(allocated) and allocated[0] < allocated[-1]


def test_graph_breaks_and_recompiles_of_a_compiled_model() -> None:
    run = report_of("compiled.py", "--no-lint")
    brk = _measured(run, "graph_break")
    assert brk["tip"] == "compile-graph-breaks-recompiles"
    assert brk["line"] == planted("compiled.py", "graph_break")
    assert "print" in brk["evidence"]
    recompile = _measured(run, "recompile")
    assert recompile["tip"] == "compile-graph-breaks-recompiles"
    assert "size mismatch" in recompile["evidence"]
    assert recompile["path"] == "compiled.py"
