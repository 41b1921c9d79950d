"""Fixes never change behaviour (issue 24, "What to build" 3), proven by running them.

Every program here is linted with every rule, fixed with ``--fix`` (safe fixes) and with
``--fix --unsafe-fixes``, and the original and each fixed text are run on the CPU in the
worlds its free names allow (a flag both ways, a CPU and a CUDA device): the programs are

* every INVALID example of every fixable rule;
* every FIX_CASES program of tests/lint/test_lint.py;
* `SHAPES`: how real scripts bind the deprecated AMP names (conditional expressions, CPU-or-CUDA
  choices, assignment chains, ``import ... as``, attributes on ``self``, ``functools.partial``,
  module- and function-level names, rebinding), and the edit positions that went wrong.

`tests.lint.fix_trace` runs them all, in turn, in one fork of the snippet harness's zygote
(torch imported once) and records what each builds from the real torch objects. A safe fix
must leave exactly the original's trace; an unsafe fix exactly the original's with its
documented difference (`DOCUMENTED`), which must show. A fixed call must run in some world
(`WITNESS`). A shape that is not fixed must keep its text and carry no fix.
"""

from __future__ import annotations

import builtins
import difflib
import itertools
import json
import re
import symtable
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pytest

from generator.lint.api import run_source
from generator.lint.rules import RULES
from tests.lint.fix_shapes import SHAPES, XFAIL, Shape
from tests.lint.test_lint import FIX_CASES, _before

#: One worker runs the whole batch once (the fixture is per module, so per xdist worker).
pytestmark = pytest.mark.xdist_group("fix-equivalence")

# --- the worlds: values for the names an example leaves free --------------------------------

_FLAG = (("on", "True"), ("off", "False"))
#: name -> the values it takes (label, expression); each world picks one per free name.
STUBS: dict[str, tuple[tuple[str, str], ...]] = {
    "use_amp": _FLAG,
    "use_fp16": _FLAG,
    "use_torch_format": _FLAG,
    "device": (("cpu", "_w.torch.device('cpu')"), ("cuda", "_w.torch.device('cuda')")),
    "model": (("", "_w.model(_device)"),),
    "x": (("", "_w.torch.randn(2, 4, device=_device)"),),
    "layer": (("", "_w.torch.nn.Linear(4, 6)"),),
    "optimizer": (("", "_w.optimizer(model)"),),
    "lr_scheduler": (("boundary", "_w.scheduler(optimizer, 2)"), ("between", "_w.scheduler(optimizer, 1)")),
    "train": (("", "lambda epoch: optimizer.step()"),),
    "path": (("", "_w.checkpoint('model.pt')"),),
    "ds": (("", "_w.dataset()"),),
    "data": (("", "[_w.torch.randn(2, 4) for _ in range(2)]"),),
    "f": (("", "_w.loss"),),
    "NoOpScaler": (("", "_w.NoOpScaler"),),
    "DDP": (("", "_w.ddp"),),
}  # fmt: skip
#: Stubs built from others (a model's optimizer: its gradients show in the model).
NEEDS = {"optimizer": ("model",), "lr_scheduler": ("optimizer",), "train": ("optimizer",)}


def _free_names(code: str) -> set[str]:
    """The global names the program reads (at module level or in a function) and never
    binds at module level, nor the builtins do."""
    top = symtable.symtable(code, "program.py", "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    bound |= {s.get_name() for s in top.get_symbols() if s.is_namespace()}
    read: set[str] = set()
    tables = [top]
    while tables:
        table = tables.pop()
        tables += table.get_children()
        for sym in table.get_symbols():
            if sym.is_referenced() and (table is top or sym.is_global()):
                read.add(sym.get_name())
            if table is not top and sym.is_declared_global() and sym.is_assigned():
                bound.add(sym.get_name())
    return read - bound - set(dir(builtins))


def worlds(code: str) -> list[tuple[str, str]]:
    """Each world's label and the code that defines the program's free names."""
    free = _free_names(code)
    missing = free - set(STUBS)
    assert not missing, f"add a stub for {sorted(missing)} to STUBS"
    need = set(free)
    while extra := {d for n in need for d in NEEDS.get(n, ())} - need:
        need |= extra
    names = [n for n in STUBS if n in need]  # STUBS order: what a stub needs comes first
    out = []
    for choice in itertools.product(*(STUBS[n] for n in names)):
        label = ",".join(f"{n}={lab}" for n, (lab, _) in zip(names, choice, strict=True) if lab)
        # the model and its input live on the program's device (`device`, or CUDA after `.cuda()`)
        where = repr("cuda" if ".cuda(" in code else "cpu")
        head = f"import tests.lint.fix_worlds as _w\n_w.checkpoint('ckpt.pt')\n_device = {where}\n"
        lines = [
            f"{n} = _device = {expr}" if n == "device" else f"{n} = {expr}"
            for n, (_, expr) in zip(names, choice, strict=True)
        ]
        world = head + "\n".join(lines)
        out.append((label or "-", world + "\n"))
    return out


# --- the programs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Program:
    name: str
    code: str
    shape: Shape | None = None


def _programs() -> list[Program]:
    out = [
        Program(f"{rule.code}-invalid-{i}", example.code)
        for rule in RULES
        if rule.fixable
        for i, example in enumerate(rule.invalid_examples())
    ]
    for code, case in sorted(FIX_CASES.items()):
        source = case.code
        if source.startswith("<before:"):
            source = _before(source.removeprefix("<before:").removesuffix(">"))
        out.append(Program(f"{code}-fix-case", source))
    out += [Program(f"shape-{name}", shape.code, shape) for name, shape in SHAPES.items()]
    return out


PROGRAMS = _programs()


@dataclass
class Linted:
    """A program's findings and its text after ``--fix`` and after ``--fix --unsafe-fixes``."""

    findings: list[Any]
    safe: str
    unsafe: str
    #: The rules whose fixes were applied, and those of them that are unsafe.
    fixed_by: set[str] = field(default_factory=set)
    unsafe_codes: set[str] = field(default_factory=set)


@cache
def lint(code: str) -> Linted:
    """``diff``: the fixed text, and the findings of the original."""
    safe_run = run_source(code, "program.py", diff=True, isolated=True)
    findings, safe = safe_run.result.findings, safe_run.text
    unsafe = run_source(code, "program.py", diff=True, unsafe=True, isolated=True).text
    with_fix = {f.rule: f.fix for f in findings if f.edits}
    codes = set(with_fix) if unsafe != code else set()
    return Linted(findings, safe, unsafe, codes, {c for c in codes if with_fix[c] == "unsafe"})


def _jobs() -> tuple[list[dict[str, str]], dict[str, Linted]]:
    jobs, linted = [], {}
    for program in PROGRAMS:
        result = linted[program.name] = lint(program.code)
        if result.unsafe == program.code:
            continue  # nothing to run: the tests check that nothing was promised
        variants = {"original": program.code}
        if result.safe != program.code:
            variants["safe"] = result.safe
        if result.unsafe != result.safe:
            variants["unsafe"] = result.unsafe
        for label, world in worlds(program.code):
            for variant, text in variants.items():
                key = f"{program.name}|{label}|{variant}"
                jobs.append({"key": key, "world": world, "code": text})
    return jobs, linted


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Linted]]:
    """Every job in one run of the snippet harness: one fork of its zygote (torch imported
    once) runs them all, in turn."""
    from generator.records.process import run_python

    jobs, linted = _jobs()
    out = tmp_path_factory.mktemp("fixeq") / "traces.json"
    code = "from tests.lint.fix_trace import main\nmain(JOBS, OUT)\n"
    result = run_python(
        code, None, "fix_equivalence.py", "cpu", 300, preset={"JOBS": jobs, "OUT": str(out)}
    )
    assert result.ok, result.output
    traces = json.loads(out.read_text(encoding="utf-8"))
    assert set(traces) == {j["key"] for j in jobs}
    return traces, linted


# --- what an unsafe fix is documented to change ---------------------------------------------

Trace = dict[str, Any]


def _copy(trace: Trace) -> Trace:
    return json.loads(json.dumps(trace))


def _events(trace: Trace, *kinds: str) -> list[dict[str, Any]]:
    return [data for kind, data in trace["events"] if kind in kinds or kind.startswith(kinds)]


def _walk(value: Any, fn: Callable[[Any], Any]) -> Any:
    """``value`` with ``fn`` applied to every dict and leaf, from the leaves up."""
    if isinstance(value, list):
        return fn([_walk(v, fn) for v in value])
    if isinstance(value, dict):
        return fn({k: _walk(v, fn) for k, v in value.items()})
    return fn(value)


def _erase_weights_only(trace: Trace) -> Trace:
    for data in _events(trace, "load"):
        data["weights_only"] = "*"
    return trace


def _erase_set_to_none(trace: Trace) -> Trace:
    """``set_to_none``, and a gradient of zeros against none (what it decides)."""
    for data in _events(trace, "zero_grad."):
        data["set_to_none"] = "*"

    def zero_is_none(v: Any) -> Any:
        if isinstance(v, dict) and "nn" in v:
            for pair in v["params"].values():
                grad = pair[1]
                if (
                    grad is not None
                    and grad["tensor"][4] is not None
                    and not any(grad["tensor"][4])
                ):
                    pair[1] = None
        return v

    trace["namespace"] = _walk(trace["namespace"], zero_is_none)
    return trace


def _erase_non_blocking(trace: Trace) -> Trace:
    trace["events"] = [e for e in trace["events"] if e[0] != "copy"]
    return trace


def _both(erase: Callable[[Trace], Trace]) -> Callable[[Trace, Trace], tuple[Trace, Trace]]:
    return lambda a, b: (erase(a), erase(b))


def _align(a: Any, b: Any, pairs: set[tuple[Any, Any]]) -> Any:
    """``a`` with each leaf ``x`` that is ``y`` in ``b`` where ``(x, y)`` is in ``pairs``."""
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return {k: _align(a[k], b[k], pairs) for k in a}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [_align(x, y, pairs) for x, y in zip(a, b, strict=True)]
    return b if (a, b) in pairs else a


def _number(token: str) -> float | str:
    try:
        return float(token)
    except ValueError:
        return token


def _erase_get_lr(a: Trace, b: Trace) -> tuple[Trace, Trace]:
    """Where the original read a rate with ``get_lr()``, the fixed program reads the rate in
    use (``get_last_lr()``): in the events, and wherever the values read went (the names the
    program keeps, what it prints), each read value of the original may be the rate in use at
    that read in the fixed trace, and nothing else may differ."""
    pairs: set[tuple[Any, Any]] = set()
    for data in _events(a, "lr-read"):
        if data["method"] == "get_lr":
            pairs |= set(zip(data["value"]["list"], data["in_use"]["list"], strict=True))
            data["method"], data["value"] = "get_last_lr", data["in_use"]
    a["namespace"] = _align(a["namespace"], b["namespace"], pairs)
    words_a, words_b = re.split(r"(\s+)", a["stdout"]), re.split(r"(\s+)", b["stdout"])
    if len(words_a) == len(words_b):
        a["stdout"] = "".join(
            y if (_number(x), _number(y)) in pairs else x
            for x, y in zip(words_a, words_b, strict=True)
        )
    return a, b


def _shows(kinds: str, key: str, old: tuple[Any, ...], new: Any) -> Callable[[Trace, Trace], bool]:
    def shows(original: Trace, fixed: Trace) -> bool:
        pairs = zip(_events(original, kinds), _events(fixed, kinds), strict=False)
        return any(a.get(key) in old and b.get(key) == new for a, b in pairs)

    return shows


def _more_copies(original: Trace, fixed: Trace) -> bool:
    return len(_events(fixed, "copy")) > len(_events(original, "copy"))


#: Unsafe rule -> (what its fix documents, the erasure of that difference, whether a pair of
#: traces shows it). After erasure the traces must be equal: the difference and nothing else.
Erase = Callable[[Trace, Trace], tuple[Trace, Trace]]
DOCUMENTED: dict[str, tuple[str, Erase, Callable[[Trace, Trace], bool]]] = {
    "PTT011": (
        "torch.load receives weights_only=True",
        _both(_erase_weights_only),
        _shows("load", "weights_only", (None, False), True),
    ),
    "PTT032": (
        "zero_grad receives set_to_none=True: gradients become None, not zeros",
        _both(_erase_set_to_none),
        _shows("zero_grad.", "set_to_none", (False,), True),
    ),
    "PTT054": (
        "the copies of the batches are non-blocking",
        _both(_erase_non_blocking),
        _more_copies,
    ),
    "PTT059": (
        "the rate read is the one in use (get_last_lr), not get_lr's",
        _erase_get_lr,
        _shows("lr-read", "method", ("get_lr",), "get_last_lr"),
    ),
}

#: What each fix's rewritten call leaves in a trace when it runs (the proof is not vacuous).
WITNESS = {
    "PTT001": "autocast",
    "PTT002": "GradScaler",
    "PTT003": "custom_",
    "PTT004": "cuda.reset_peak_memory_stats",
    "PTT005": "cuda.",
    "PTT008": "clip_grad_norm_",
    "PTT009": "init.",
    "PTT011": "load",
    "PTT015": None,  # no call of its own: the tensor it makes is in the namespace
    "PTT032": "zero_grad.",
    "PTT054": "copy",
    "PTT059": "lr-read",
}


# --- the proof ------------------------------------------------------------------------------


def _difference(a: Trace, b: Trace) -> str:
    def lines(t: Trace) -> list[str]:
        return json.dumps(t, indent=1, sort_keys=True).splitlines()

    return "\n".join(
        list(difflib.unified_diff(lines(a), lines(b), "original", "fixed", lineterm=""))[:80]
    )


def _params() -> list[Any]:
    out = []
    for program in PROGRAMS:
        name = program.name.removeprefix("shape-")
        marks = [pytest.mark.xfail(strict=True, reason=XFAIL[name])] if name in XFAIL else []
        out.append(pytest.param(program, marks=marks, id=program.name))
    return out


@pytest.mark.parametrize("program", _params())
def test_fixed_program_builds_what_the_original_builds(
    program: Program, runs: tuple[dict[str, Any], dict[str, Linted]]
) -> None:
    traces, linted = runs
    result = linted[program.name]
    shape = program.shape
    if shape is not None and shape.reported is not None:
        assert shape.reported in {f.rule for f in result.findings}, "the finding stays"
    if result.unsafe == program.code:  # no fix: nothing offered
        assert not [f.rule for f in result.findings if f.edits]
        assert shape is None or not shape.fixed, "a fix was expected"
        return
    witnessed: set[str] = set()
    shown: set[str] = set()
    for label, _ in worlds(program.code):
        key = f"{program.name}|{label}|"
        original = traces[key + "original"]
        assert "crashed" not in original, original["crashed"]
        assert original["raised"] is None, f"{label}: the original fails: {original['raised']}"
        for variant in ("safe", "unsafe"):
            fixed = traces.get(key + variant)
            if fixed is None:
                continue
            assert "crashed" not in fixed, fixed["crashed"]
            a, b = _copy(original), _copy(fixed)
            if variant == "unsafe":
                for code in result.unsafe_codes:
                    what, erase, shows = DOCUMENTED[code]
                    if shows(original, fixed):
                        shown.add(code)
                    a, b = erase(a, b)
            assert a == b, (
                f"{label}, --fix{' --unsafe-fixes' if variant == 'unsafe' else ''}:\n{_difference(a, b)}"
            )
            for code in result.fixed_by:
                witness = WITNESS[code]
                kinds = [k for k, _ in fixed["events"]]
                if witness is None or any(k.startswith(witness) for k in kinds):
                    witnessed.add(code)
    assert shape is None or shape.fixed, (
        f"rewritten, though not every alias path is known:\n{result.unsafe}"
    )
    assert witnessed == result.fixed_by, (
        f"no world ran the fixed call of {result.fixed_by - witnessed}"
    )
    assert shown == result.unsafe_codes, (
        f"the documented change of {result.unsafe_codes - shown} never showed"
    )


def test_every_fixable_rule_is_proven_on_a_program_it_fixes() -> None:
    fixed = {code for p in PROGRAMS for code in lint(p.code).fixed_by}
    assert fixed == {r.code for r in RULES if r.fixable}
    assert set(DOCUMENTED) == {r.code for r in RULES if r.fix_safety == "unsafe"}
    assert set(WITNESS) == {r.code for r in RULES if r.fixable}
