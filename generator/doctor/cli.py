"""The ``doctor`` subcommand: run a training script for a few steps, measure where the time
and memory go, and name the tips that fix it."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from generator.command import Command
from generator.errors import UserError

if TYPE_CHECKING:
    from generator.doctor.model import Finding, Measurement

EPILOG = """\
how it runs:
  SCRIPT runs in this process as __main__, as `python SCRIPT ARGS` would (sys.argv,
  __file__, its folder first on sys.path), unmodified; its own output goes to standard
  error, the report to standard output (or -o FILE). A step ends when the first optimizer
  that steps returns from step(). The doctor lets --warmup steps pass, times --steps with
  light hooks only, lets one step pass as the profiler starts, records --profile-steps
  under torch.profiler, then ends the script (with an exception its `except Exception`
  does not catch: its `finally` blocks run) and reports. A script that ends sooner is
  reported on the steps it ran. Put `--` before the script's arguments if one of them is
  also a doctor option.

what it measures, and what it costs:
  step time and phases   data (DataLoader __next__), forward (up to each backward call),
                         backward, optimizer (step()), other: two clock reads per call,
                         so the timed steps run at full speed
  profiler               torch.profiler over the --profile-steps, CPU and CUDA activity,
                         with record_shapes, with_stack, profile_memory, with_flops: those
                         steps run slower (Python-heavy steps most, up to about 2x); their
                         counts (syncs, ops, bytes, FLOPs) are divided by the timed steps
  host-device syncs      .item(), .tolist(), nonzero() on CUDA, cudaStreamSynchronize:
                         from the profiler, each with the user's line from its Python stack
  DataLoader, optimizer  settings as built, set_to_none of zero_grad, foreach/fused from the
                         ops inside step(): from the profiler and one hook each, no cost
  torch.compile          graph breaks and recompiles with reasons: read once at the end
  memory                 peak and per-step allocated bytes, growth, tensors that outlive
                         their step (the line, the container holding them): from the
                         profiler's allocation events; a gc scan only when some survive
  GPU (CUDA only)        idle time, pageable copies, TF32 and precision of the matmuls,
                         cuDNN benchmark, channels_last, the allocator's reserved memory
  DDP/FSDP               communication time and the part no computation hides
  FLOP/s, MFU            from the profiler's FLOP counts, against the peak of the GPU
  static lint            `pytorch-tips lint` on SCRIPT, listed apart (--no-lint: off)

findings:
  Only what was measured: a phase (data wait, optimizer) from 5% of the step. Each has a
  severity (error: half of the step time or more; warning: a tenth or more; info: less;
  growing memory and graph breaks: warning; PyTorch's own default for-loop optimizer on
  the CPU: info), the measured evidence, its share of the step time (or of the peak
  memory), the user's line where known, and the tip that fixes it: `pytorch-tips show TIP`
  prints the tip and its code. The lint's findings follow, marked static, less those a
  measured finding reports at the same line and tip.

JSON (--format json), one object:
  script, args, device, device_name, outcome (stopped | finished | exited | raised),
  steps (timed), warmup, total_steps, step_time_s (median), breakdown {data, forward,
  backward, optimizer, other: mean seconds a step}, gpu_idle_s, peak_memory_bytes,
  memory {capacity_bytes, growth_bytes_per_step}, flops_per_step, achieved_flops, mfu,
  per_step [{seconds, data, forward, backward, optimizer, other, allocated_bytes,
  peak_allocated_bytes, reserved_bytes}], profiled_steps [the same], dataloaders, optimizers,
  findings [{tip, severity (error|warning|info), title, evidence, share (or null),
  path, line (or null), static, kind, rule, page}], world_size, ranks, error
  {type, message, path, line} (or null), notes, trace, elapsed_s

several processes:
  torchrun --nproc_per_node 8 -m generator doctor train.py ARGS
  srun python -m torch.distributed.run --nproc_per_node 8 -m generator doctor train.py
  Every rank measures; rank 0 reports, with each rank's step time and data wait.

exit status:
  0  a report (findings or not)
  1  the script raised (its error in one line, after the report of the steps it ran),
     or it ended before a measured step
  2  usage: a missing script, a file that is not Python, a bad option, a report file
     or trace folder that cannot be written (checked before the run)
  130  interrupted (Ctrl-C): the profiler is stopped, no report is written
"""

FORMATS = ("text", "json", "html")


def _count(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more: {value}")
        return value

    return parse


def _add_doctor(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    p.add_argument("script", metavar="SCRIPT", help="the training script to run")
    rest = p.add_argument(
        "args", nargs=argparse.REMAINDER, metavar="ARGS", help="the script's own arguments"
    )
    rest.required = False  # argparse marks a REMAINDER positional required; none may follow
    p.add_argument(
        "--warmup",
        type=_count(0),
        default=3,
        metavar="N",
        help="optimizer steps run before measuring (default: 3; compilation, allocator warm-up)",
    )
    p.add_argument(
        "--steps",
        type=_count(1),
        default=10,
        metavar="N",
        help="steps timed, with light hooks only (default: 10): the step time and its phases",
    )
    p.add_argument(
        "--profile-steps",
        type=_count(0),
        default=3,
        metavar="N",
        help="then steps under torch.profiler, after one to let it settle (default: 3; 0: no "
        "profiler): syncs, ops, memory, FLOPs, GPU activity",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="report format (default: from -o FILE's extension, .json or .html, else text; "
        "html: one self-contained file with a chart)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the report to FILE (replaced whole; its folder is checked before the run)",
    )
    p.add_argument(
        "--trace",
        metavar="DIR",
        help="also write the profiler's trace (Chrome/Perfetto JSON, one a rank) into DIR "
        "(made before the run if missing; needs --profile-steps 1 or more)",
    )
    p.add_argument("--no-lint", action="store_true", help="do not run the static lint")
    p.add_argument("--quiet", action="store_true", help="no progress on standard error")
    p.add_argument(
        "--lang", choices=["en", "zh"], default="en", help="language of the report (default: en)"
    )


def report_format(chosen: str | None, output: str | None) -> str:
    """``--format`` as given, else the one -o's extension names, else text."""
    if chosen is not None:
        return chosen
    suffix = Path(output).suffix.lower() if output else ""
    return {".json": "json", ".html": "html", ".htm": "html"}.get(suffix, "text")


def _check_output(path: str | None) -> Path | None:
    """-o's file, checked before the run: a file name in a folder that takes a new file."""
    if path is None:
        return None
    if not path.strip():
        raise UserError("-o: give the report's file name")
    out = Path(path)
    if out.is_dir():
        raise UserError(f"{out} is a folder: give the report's file name")
    if not out.parent.is_dir():  # checked now, not after the run
        what = "not a folder" if out.parent.exists() else "no such folder"
        raise UserError(f"{out.parent}: {what}")
    probe = _temporary(out)
    try:
        probe.touch(exist_ok=False)
    except OSError as err:
        raise UserError(f"{out}: cannot write the report there: {err.strerror}") from None
    probe.unlink(missing_ok=True)
    return out


def _check_trace(path: str | None, profile_steps: int) -> Path | None:
    """--trace's folder, made before the run."""
    if path is None:
        return None
    if not profile_steps:
        raise UserError("--trace needs the profiler: --profile-steps 0 records no trace")
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder} is a file: --trace takes a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"{folder}: cannot make the trace's folder: {err.strerror}") from None
    return folder


def _temporary(out: Path) -> Path:
    return out.with_name(f".{out.name}.{os.getpid()}.tmp")


def _write(text: str, out: Path | None) -> None:
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    tmp = _temporary(out)
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    except BaseException as err:  # an OSError, or Ctrl-C while writing: no file half-written
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise UserError(f"{out}: cannot write the report: {err.strerror}") from None
        raise


def cmd_doctor(args: argparse.Namespace) -> int:
    from generator.records.ui import labels

    L = labels()[args.lang]
    try:
        return _doctor(args, L)
    except KeyboardInterrupt:  # Ctrl-C: the profiler is stopped, no report is written
        sys.stderr.write(L["doctor_interrupted"] + "\n")
        return 130


def _doctor(args: argparse.Namespace, L: dict[str, str]) -> int:
    from generator.doctor import report, script, session, units

    path = Path(args.script)
    code = script.load(path)  # a missing or broken script fails before torch is imported
    rank, _ = session.rank_and_world()
    out = _check_output(args.output) if rank == 0 else None  # rank 0 writes the report
    trace_dir = _check_trace(args.trace, args.profile_steps)
    script_args = args.args[1:] if args.args[:1] == ["--"] else list(args.args)
    progress = _progress(L, quiet=args.quiet or rank != 0)
    options = session.Options(args.warmup, args.steps, args.profile_steps, trace_dir)
    try:
        ran, m, trace = session.measure(path, code, script_args, options, L, progress)
    except session.DoctorFailure as err:
        raise DoctorError(L["doctor_failed"].format(error=err)) from None
    if not m.steps:
        if ran.how == "raised":
            line = L["doctor_script_raised"].format(error=m.error)
        elif ran.how == "exited" and ran.exit_code:
            line = L["doctor_script_exited"].format(
                code=ran.exit_code, seconds=units.seconds(ran.seconds), steps=m.total_steps
            )
        elif m.outcome == "no_steps":
            line = L["doctor_no_steps"].format(script=path, seconds=units.seconds(ran.seconds))
        else:
            line = L["doctor_warmup_only"].format(steps=m.total_steps, warmup=args.warmup)
        sys.stderr.write(line + "\n")
        return 1
    static = [] if args.no_lint else _static(path, args.lang, m, L)
    data = report.as_dict(
        m, str(path), script_args, args.warmup, static, str(trace) if trace else None
    )
    if rank == 0:
        fmt = report_format(args.format, args.output)
        if fmt == "json":
            text = report.to_json(data)
        elif fmt == "html":
            from generator.doctor.html import to_html

            text = to_html(data, L, args.lang)
        else:
            text = report.to_text(data, L)
        _write(text, out)
        if out is not None and not args.quiet:
            sys.stderr.write(L["doctor_wrote"].format(path=out) + "\n")
    if ran.how == "raised":
        sys.stderr.write(L["doctor_script_raised"].format(error=m.error) + "\n")
        return 1
    return 0


class DoctorError(UserError):
    """The doctor's own analysis failed (exit status 1)."""

    exit_code = 1


def _static(path: Path, lang: str, m: Measurement, L: dict[str, str]) -> list[Finding]:
    from generator.doctor.static import static_findings

    try:
        return static_findings(path, lang, m.findings)
    except UserError as err:  # the lint's configuration: note it, keep the report
        m.notes.append(L["doctor_note_lint_failed"].format(error=err))
        return []


def _progress(L: dict[str, str], quiet: bool) -> Callable[[str, int, int], None]:
    def say(phase: str, done: int, total: int) -> None:
        if quiet:
            return
        if phase == "timing" and done == 0:
            text = L["doctor_progress_start"]
        else:
            text = L["doctor_progress_" + phase]  # warmup, timing, profiling
        sys.stderr.write(text.format(done=done, total=total) + "\n")
        sys.stderr.flush()

    return say


COMMANDS = {
    "doctor": Command(
        "Run a training script for a few steps, measure where time and memory go, and name "
        "the tips that fix it.",
        _add_doctor,
        cmd_doctor,
        needs=("run",),
    ),
}
