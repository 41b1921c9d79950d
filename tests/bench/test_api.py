"""`generator.bench.api.measure`, what ``python -m generator bench`` runs, called directly:
checks before measuring, the tips skipped on the device, the run and its file, and the
lines the command prints for it (`generator.bench.texts`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.bench import api, texts
from generator.bench.results import read_results
from generator.errors import NotFound, UserError
from generator.records import load as records
from generator.records.benchspec import NotMeasurable
from generator.records.fields import Text
from generator.records.schema import Tip
from tests.helpers import example_record


def _tip(tip_id: str, **bench: object) -> Tip:
    data = example_record()
    data["bench"] = {
        "sizes": {"cpu": [{"values": {"n": 4}}], "cuda": [{"values": {"n": 4}}]},
        "setup": "x = torch.ones(n)",
        "before": "x + 1",
        "after": "x.add_(1)",
    } | bench
    return Tip.model_validate(data | {"id": tip_id})


def _gpu_only(tip: Tip) -> Tip:
    assert tip.bench is not None
    reason = Text(en="Needs a GPU.\nMore.", zh="需要 GPU。")
    off = NotMeasurable(devices=["cpu"], reason=reason)
    return tip.model_copy(update={"bench": tip.bench.model_copy(update={"not_measurable": off})})


def test_measure_checks_runs_writes_and_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tips = {"cpu-tip": _tip("cpu-tip"), "gpu-tip": _gpu_only(_tip("gpu-tip"))}
    monkeypatch.setattr(records, "get_tip", tips.__getitem__)
    out = tmp_path / "cpu.json"
    skipped: list[str] = []
    done = api.measure(
        ["cpu-tip", "gpu-tip"],
        quick=True,
        replicates=2,
        out=out,
        progress=False,
        on_skip=lambda tip: skipped.append(texts.skip_line(tip, "cpu")),
    )
    assert skipped == ["skip gpu-tip: not measurable on cpu: Needs a GPU."]
    assert [t.id for t in done.tips] == ["cpu-tip"] and done.out == out and done.failed == 0
    assert list(read_results(out).results) == list(done.run.results) == ["cpu-tip"]
    (line,) = texts.result_lines(done.run)
    timed = done.run.results["cpu-tip"]["default"].time
    assert timed is not None and line.startswith("cpu-tip  ") and line.endswith(timed.verdict)
    assert texts.wrote_line(out, 1, done.elapsed_s).startswith(f"\nwrote {out}: 1 tip(s)")


def test_measure_refuses_before_measuring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _tip("plain-tip").model_copy(update={"bench": None})
    tips = {"plain-tip": plain, "gpu-tip": _gpu_only(_tip("gpu-tip"))}
    monkeypatch.setattr(records, "get_tip", tips.__getitem__)
    out = tmp_path / "cpu.json"
    with pytest.raises(UserError, match="plain-tip has no bench section"):
        api.measure(["plain-tip"], out=out, progress=False)
    with pytest.raises(NotFound, match="no tip to measure on cpu"):
        api.measure(["gpu-tip"], out=out, progress=False)
    assert not out.exists()
