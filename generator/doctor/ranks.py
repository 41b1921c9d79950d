"""Under torchrun: every rank measures, rank 0 reports with the spread across ranks.

The ranks exchange their figures (`Measurement.summary`: median step time, phase times,
peak memory) with one ``all_gather_object`` over the script's own process group, at the
end of the last measured step, when every rank is at the same step. Where the script has
no process group (or has destroyed it), each rank reports alone.
"""

from __future__ import annotations

from typing import Any

from generator.doctor import units
from generator.doctor.model import Measurement


def exchange(m: Measurement, L: dict[str, str]) -> None:
    """Gather every rank's summary into ``m.ranks``; on rank 0, add the spread to the data
    wait finding."""
    try:
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()):
            m.notes.append(L["doctor_note_no_group"])
            return
        gathered: list[Any] = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, m.summary())
    except Exception as err:  # a broken group must not end the report
        m.notes.append(L["doctor_note_gather_failed"].format(error=f"{type(err).__name__}"))
        return
    m.ranks = [g for g in gathered if isinstance(g, dict)]
    if m.rank == 0:
        add_spread(m, L)


def add_spread(m: Measurement, L: dict[str, str]) -> None:
    """The slowest rank's data wait and step time, after rank 0's own."""
    if len(m.ranks) < 2:
        return
    waits = [(r["breakdown"].get("data", 0.0), r["rank"]) for r in m.ranks]
    (lo, _), (hi, slowest) = min(waits), max(waits)
    steps = [r["step_time_s"] for r in m.ranks if r["step_time_s"] is not None]
    spread = L["doctor_spread"].format(
        ranks=len(m.ranks),
        lo=units.seconds(lo),
        hi=units.seconds(hi),
        rank=slowest,
        step_lo=units.seconds(min(steps)) if steps else "–",
        step_hi=units.seconds(max(steps)) if steps else "–",
    )
    added = False
    for finding in m.findings:
        if finding.kind in ("data_wait", "comm_overlap"):  # collectives wait for the slowest
            finding.evidence += spread
            added = True
    if not added:
        m.notes.append(spread.lstrip("; ；"))
