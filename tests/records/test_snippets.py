"""Run every tip's snippets, then its checks, in a fresh process per tip × variant × device.

Hardware needs are data in the records: a tip that does not list ``cpu`` gets no CPU case,
and its CUDA cases skip with the record's reason where no GPU exists. On such a machine the
CUDA pass of the other tips is one skipped case saying how many cases did not run. A collection that
yields no snippet case fails instead of passing vacuously.
"""

from __future__ import annotations

import ast
import functools

import pytest

from generator.records.harness import run_variant
from generator.records.load import load_tips
from generator.records.schema import Tip


@functools.cache
def cuda_device_count() -> int:
    """The CUDA GPUs this process sees. A CPU-only build of torch (a ``+cpu`` version, as
    PyTorch's own CPU wheels are named) sees none: then torch is not imported at collection."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        if version("torch").endswith("+cpu"):
            return 0
    except PackageNotFoundError:
        return 0
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _cases(tips: list[Tip]) -> list:
    gpus = cuda_device_count()
    cases, cuda_cases_not_run = [], 0
    for tip in tips:
        devices = tip.hardware.devices
        for name in tip.variants():
            if "cpu" in devices:
                cases.append(pytest.param(tip, name, "cpu", id=f"{tip.id}-{name}-cpu"))
            if "cuda" in devices or "multi-gpu" in devices:
                if gpus or "cpu" not in devices:
                    # GPU-only tips always appear, so their skip reason is visible.
                    cases.append(pytest.param(tip, name, "cuda", id=f"{tip.id}-{name}-cuda"))
                else:
                    cuda_cases_not_run += 1
    if cuda_cases_not_run:
        reason = (
            f"no CUDA GPU on this machine: the CUDA pass of {cuda_cases_not_run} snippet cases "
            "(of tips whose CPU cases ran) did not run"
        )
        cases.append(pytest.param(None, "", "cuda", id="cuda-pass", marks=pytest.mark.skip(reason)))
    if not any(c.values[2] == "cpu" for c in cases):
        # Nothing would run on a CPU-only machine: make that a failure, not a green run.
        cases.append(pytest.param(None, "", "cpu", id="no-snippet-cases-collected"))
    return cases


def _skip_reason(tip, device: str) -> str | None:
    if device != "cuda":
        return None
    need = 2 if tip.hardware.devices == ["multi-gpu"] else 1
    if cuda_device_count() >= need:
        return None
    gpus = "several CUDA GPUs" if need > 1 else "a CUDA GPU"
    if "cpu" in tip.hardware.devices:
        return f"needs {gpus}, which this machine lacks; the CPU case of {tip.id} ran instead"
    why = tip.hardware.notes.en if tip.hardware.notes else ""
    return f"{tip.id} needs {gpus}, and there is none here. {why}".strip()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The cases come from the records at collection: `load_tips` validates them once per test
    process, and the `tips` fixture gets the same ones."""
    if metafunc.function is test_snippet_runs_and_checks_hold:
        metafunc.parametrize(("tip", "variant", "device"), _cases(load_tips()))


def test_snippet_runs_and_checks_hold(tip, variant: str, device: str) -> None:
    assert tip is not None, "no snippet test was collected: tips/ has no runnable record"
    reason = _skip_reason(tip, device)
    if reason:
        pytest.skip(reason)
    code = tip.variants()[variant]
    filename = f"snippets/{tip.id}/{variant}.py"
    result = run_variant(
        code.code, code.checks, filename, device=device, launch=code.launch, probe=code.probe
    )
    # A C++ abort (gloo's teardown one is rerun, see pyproject.toml) is named on the first
    # line, so the message shows it however long the output is.
    aborts = sorted({ln.strip() for ln in result.output.splitlines() if "terminate called" in ln})
    head = f"{tip.id} {variant} on {device} failed" + "".join(f" [{a}]" for a in aborts)
    assert result.ok, f"{head}:\n{result.output[-4000:]}"


def asserts_something(checks: str) -> bool:
    """Whether ``checks`` can fail: it holds an ``assert``, a ``raise`` or a call of an
    ``assert*`` function (``torch.testing.assert_close``)."""
    for node in ast.walk(ast.parse(checks)):
        if isinstance(node, ast.Assert | ast.Raise):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name.startswith("assert"):
                return True
    return False


def test_every_check_asserts_something(tips: list[Tip]) -> None:
    """The schema makes every `after` give checks or the reason it has none (tested in
    test_validate.py); here, every check given can fail: checks that only print or compute
    would pass whatever the snippet did."""
    assert not asserts_something("print(loss)\nresult = model(x).sum()\n")
    assert asserts_something("torch.testing.assert_close(a, b)\n")
    assert asserts_something("if loss.grad_fn is not None:\n    raise AssertionError\n")
    idle = [
        f"{tip.id} {name}{where}"
        for tip in tips
        for name, variant in tip.variants().items()
        for where, checks in (
            ("", variant.checks),
            (" launch", variant.launch and variant.launch.checks),
        )
        if checks and not asserts_something(checks)
    ]
    assert idle == [], "checks that cannot fail: " + ", ".join(idle)
