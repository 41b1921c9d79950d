"""`python -m generator lint`: every rule proven by its tip's code, the interface of issue 11.

* each rule's VALID / INVALID examples (Fixit style), with the expected fixed code;
* each rule reports its tip's *before* snippet (where that snippet shows the pattern) and
  nothing in its *after* snippet; every *after* snippet and every composed ``train.py``
  lints clean with the default rules;
* each safe fix, applied to a program that uses the pattern (the tip's *before* snippet
  where it has one), yields code that runs with deprecation warnings as errors and passes
  checks that the original fails;
* bad input (syntax error, not UTF-8, binary, empty, missing path, thousands of files),
  the three output formats, exit codes, ``--select``/``--ignore``, ``# noqa``,
  ``--fix``/``--diff``, and a start-up without torch.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import yaml

from generator import paths
from generator.lint import RULES, lint_paths, lint_source, rule_codes, rules_by_tip
from generator.lint.fix import fix_source
from generator.lint.rules.base import SEVERITIES, Rule
from generator.records.schema import Tip
from tests.helpers import run_cli


def _rule_id(rule: type[Rule]) -> str:
    return f"{rule.code}-{rule.name}"


@cache
def _tips() -> dict[str, Tip]:
    from generator.records.load import load_tips

    return {t.id: t for t in load_tips() if t.id}


def _codes(findings: Sequence[object]) -> set[str]:
    return {f.rule for f in findings}  # type: ignore[attr-defined]


# --- the rules themselves -------------------------------------------------------------------


_CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("rule", RULES, ids=_rule_id)
def test_rule_is_complete(rule: type[Rule]) -> None:
    from generator.records.ui import placeholders

    assert re.fullmatch(r"PTT\d{3}", rule.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert rule.severity in SEVERITIES
    assert rule.message and "\n" not in rule.message
    assert len(rule.description()) > 80, "the docstring says why the pattern is a problem"
    assert (paths.TIPS / f"{rule.tip}.yaml").is_file(), f"{rule.tip} names no tip"
    assert rule.fixable == (rule.fix_safety is not None)
    assert rule.VALID and rule.INVALID
    # Chinese: the message (and each variant) with the same placeholders, and the why
    pairs = [(rule.message, rule.message_zh), *rule.variants.values()]
    for en, zh in pairs:
        assert zh and "\n" not in zh and _CJK.search(zh), zh
        assert placeholders(en) == placeholders(zh)
        assert placeholders(en) <= set(rule.message_args), "a default for every placeholder"
    assert _CJK.search(rule.why_zh) and "\n" not in rule.why_zh
    assert len(rule.why("zh")) > 40
    # an unsafe fix says what it can change, in both languages
    if rule.fix_safety == "unsafe":
        assert rule.fix_note and _CJK.search(rule.fix_note_zh)
    assert bool(rule.fix_note) == bool(rule.fix_note_zh)


def test_every_chinese_rule_text_uses_the_glossary_terms() -> None:
    from generator.records.glossary import find_variants

    texts = {}
    for rule in RULES:
        texts[f"{rule.code}.message_zh"] = rule.message_zh
        texts[f"{rule.code}.why_zh"] = rule.why_zh
        texts[f"{rule.code}.fix_note_zh"] = rule.fix_note_zh
        for key, (_, zh) in rule.variants.items():
            texts[f"{rule.code}.variants.{key}"] = zh
    bad = {
        name: find_variants(text) for name, text in texts.items() if text and find_variants(text)
    }
    assert not bad, bad


def test_the_glossary_check_of_rule_texts_can_fail() -> None:
    from generator.records.glossary import find_variants

    assert find_variants("每个 batch 都调用 `.item()`")  # 批次, not batch


def test_codes_and_names_are_unique_and_there_are_at_least_59() -> None:
    assert len(RULES) >= 59
    assert len({r.code for r in RULES}) == len(RULES)
    assert len({r.name for r in RULES}) == len(RULES)
    assert [r.code for r in RULES] == sorted(r.code for r in RULES)
    assert rule_codes() == {r.code for r in RULES}
    assert sorted(c for codes in rules_by_tip().values() for c in codes) == sorted(rule_codes())


def test_every_module_of_rules_is_a_registered_topic() -> None:
    """A module of generator/lint/rules/ that defines rules is in `TOPICS` (its rules would
    never run otherwise), and in the package docstring's list of topics, in that order."""
    import importlib
    import inspect
    import pkgutil

    from generator.lint import rules

    defining = set()
    for info in pkgutil.iter_modules(rules.__path__):
        module = importlib.import_module(f"{rules.__name__}.{info.name}")
        if any(
            issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__
            for obj in vars(module).values()
            if inspect.isclass(obj)
        ):
            defining.add(info.name)
    assert defining and set(rules.TOPICS) == defining, set(rules.TOPICS) ^ defining
    documented = re.findall(r"^\* `\.(\w+)`:", rules.__doc__ or "", re.M)
    assert documented == list(rules.TOPICS)


def _examples(kind: str) -> list[object]:
    out = []
    for rule in RULES:
        items = rule.VALID if kind == "valid" else rule.invalid_examples()
        for i, example in enumerate(items):
            out.append(pytest.param(rule, example, id=f"{rule.code}-{kind}-{i}"))
    return out


@pytest.mark.parametrize(("rule", "code"), _examples("valid"))
def test_valid_example_is_not_reported(rule: type[Rule], code: str) -> None:
    assert lint_source(code, rules=[rule]) == []


@pytest.mark.parametrize(("rule", "example"), _examples("invalid"))
def test_invalid_example_is_reported_and_fixed(rule: type[Rule], example) -> None:  # type: ignore[no-untyped-def]
    findings = lint_source(example.code, rules=[rule])
    assert findings and _codes(findings) == {rule.code}
    assert all(
        f.message == rule.message_in("en", None, None) or rule.code in _ARGS for f in findings
    )
    unsafe = rule.fix_safety == "unsafe"
    fixed, count = fix_source(example.code, rules=[rule], unsafe=unsafe)
    if example.fixed is not None:
        assert fixed == example.fixed
        assert count >= 1 and lint_source(fixed, rules=[rule]) == []
        if unsafe:  # an unsafe fix is never applied without --unsafe-fixes
            assert fix_source(example.code, rules=[rule]) == (example.code, 0)
    else:
        assert fixed == example.code  # nothing promised, nothing changed
    compile(fixed, "fixed", "exec")
    if example.instead is not None:  # what the rule's page says to write instead
        compile(example.instead, "instead", "exec")
        assert lint_source(example.instead, rules=[rule]) == []


def test_one_finding_per_block_of_waits_and_per_statement() -> None:
    """A block of consecutive reads is reported once (after the first the GPU is idle), the
    same statement in another loop alike, a statement two rules see once (PTT020 wins over
    PTT021 on .cpu().item()), and GPU work between two reads keeps them apart."""
    source = (
        "for x, y in loader:\n    loss, parts = f(model(x), y)\n    loss.backward()\n"
        "    optimizer.step()\n    meters['loss'].update(loss.item())\n"
        "    meters['a'].update(parts[0].item())\n    meters['b'].update(parts[1].item())\n"
        "for x, y in other_loader:\n    loss, parts = f(model(x), y)\n    loss.backward()\n"
        "    optimizer.step()\n    meters['loss'].update(loss.item())\n"
        "    history.append(loss.cpu().item())\n    scheduler.step()\n"
        "    norms.append(parts.norm().item())\n"
    )
    found = [(f.line, f.rule) for f in lint_source(source) if f.rule in {"PTT020", "PTT021"}]
    assert found == [(5, "PTT020"), (12, "PTT020"), (15, "PTT020")]


#: Rules whose findings fill the message's placeholders from the code they report.
_ARGS = {r.code for r in RULES if r.message_args or r.variants}


def test_messages_come_in_the_language_asked_for() -> None:
    source = "import torch\nscaler = torch.cpu.amp.GradScaler()\nx = torch.load('a.pt')\n"
    en = lint_source(source, lang="en")
    zh = lint_source(source, lang="zh")
    assert [f.rule for f in en] == [f.rule for f in zh] == ["PTT002", "PTT011"]
    assert (
        en[0].message
        == '`torch.cpu.amp.GradScaler` is deprecated: use `torch.amp.GradScaler("cpu", ...)`'
    )
    assert zh[0].message.startswith("`torch.cpu.amp.GradScaler` ") and _CJK.search(zh[0].message)
    assert (
        '"cpu"' in zh[0].message and not _CJK.search(en[1].message) and _CJK.search(zh[1].message)
    )


# --- proven by the tips' own code -----------------------------------------------------------

#: Rules whose tip's *before* snippet shows a different mistake of the same tip: their
#: INVALID examples carry the proof instead. The test checks that each is still true.
BEFORE_SHOWS_ANOTHER_PATTERN = {
    "PTT001": "before casts the model to bf16 (PTT044); torch.cuda.amp appears in prose only",
    "PTT002": "as PTT001",
    "PTT003": "before shows autocast on a calling thread; custom_fwd is a caveat",
    "PTT004": "before reads memory_allocated around a step, no deprecated call",
    "PTT005": "as PTT004",
    "PTT006": "before uses .data (PTT007), not the Variable wrapper",
    "PTT008": "before clips after the step (PTT030)",
    "PTT009": "before loops over .children() (PTT041) with .data (PTT007)",
    "PTT010": "before leaves the function uncompiled; TorchScript is a caveat",
    "PTT011": "before already loads with weights_only=True; it saves the whole model (PTT012)",
    "PTT016": "before does not train on CUDA, where the rule applies",
    "PTT019": "before is a single process (no process group)",
    "PTT021": "before reads the loss with .item() (PTT020)",
    "PTT022": "as PTT021",
    "PTT023": "before prints a Python float every N steps",
    "PTT027": "before casts the model (PTT044); autocast is only in the after snippet",
    "PTT028": "before calls empty_cache outside any loop",
    "PTT032": "before zeroes p.grad by hand (PTT033)",
    "PTT035": "before never calls eval(); this rule covers the opposite mistake",
    "PTT045": "the tip has no before snippet",
    "PTT046": "before sets cudnn.deterministic without benchmark (PTT047)",
    "PTT049": "before evaluates one batch, not a loop",
    "PTT052": "before reads .item() every step; an explicit synchronize is in the prose",
    "PTT054": "before pins nothing (PTT017); non_blocking without pinning is its point",
    "PTT056": "before pickles a whole module (PTT012), an object of that rule's, not of this one",
    "PTT058": "before casts the model (PTT044); apex is a caveat of the tip",
    "PTT059": "before steps the scheduler per epoch; reading get_lr() is a caveat",
}

#: Findings in other tips' *after* snippets that are real: those records should change
#: (strict: the test fails as soon as a record is fixed, so this list shrinks).
#: After snippets with a known finding the record has yet to fix (strict xfail): none today.
KNOWN_AFTER_FINDINGS: dict[str, set[str]] = {}


@pytest.mark.parametrize("rule", RULES, ids=_rule_id)
def test_rule_reports_its_tips_before_snippet(rule: type[Rule]) -> None:
    tip = _tips()[rule.tip]
    before = tip.before.code if tip.before else None
    reported = bool(before) and rule.code in _codes(lint_source(before, f"{rule.tip}/before.py"))
    if rule.code in BEFORE_SHOWS_ANOTHER_PATTERN:
        assert not reported, f"{rule.code} now reports the before snippet: drop it from the list"
        assert rule.INVALID
    else:
        assert reported, f"{rule.code} does not report snippets/{rule.tip}/before.py"


@pytest.mark.parametrize("rule", RULES, ids=_rule_id)
def test_rule_is_silent_on_its_tips_after_snippet(rule: type[Rule]) -> None:
    tip = _tips()[rule.tip]
    assert tip.after is not None and tip.after.code
    assert rule.code not in _codes(lint_source(tip.after.code, f"{rule.tip}/after.py"))


def _after_cases() -> list[object]:
    cases = []
    for path in sorted(paths.TIPS.glob("*.yaml")):
        if path.name.startswith("_"):
            continue
        marks = []
        if path.stem in KNOWN_AFTER_FINDINGS:
            marks = [pytest.mark.xfail(strict=True, reason="a real finding the record should fix")]
        cases.append(pytest.param(path.stem, marks=marks, id=path.stem))
    return cases


@pytest.mark.parametrize("tip_id", _after_cases())
def test_every_after_snippet_lints_clean(tip_id: str) -> None:
    tip = _tips()[tip_id]
    if tip.after is None or not tip.after.code:
        pytest.skip("advice only: no after snippet")
    findings = lint_source(tip.after.code, f"snippets/{tip_id}/after.py")
    assert findings == [], [f"{f.line}: {f.rule} {f.message}" for f in findings]


COMPOSE_FLAGS = {
    "plain": [],
    "amp-accum-clip": ["--amp", "--accum", "4", "--clip-grad-norm", "1.0"],
    "fp16-cuda": ["--amp", "--amp-dtype", "fp16", "--clip-grad-norm", "1.0", "--device", "cuda"],
    "ddp-accum-eval": ["--ddp", "--accum", "2", "--eval-every", "2", "--workers", "2"],
    "cuda-benchmark": ["--cudnn-benchmark", "--tf32", "--workers", "4", "--device", "cuda"],
    "full": [
        "--amp",
        "--accum",
        "2",
        "--ddp",
        "--compile",
        "--channels-last",
        "--activation-checkpointing",
        "--clip-grad-norm",
        "1.0",
        "--deterministic",
        "--seed",
        "0",
        "--workers",
        "1",
        "--fused-optimizer",
        "--no-decay-norm-bias",
        "--profile",
        "--memory-stats",
        "--eval-every",
        "4",
    ],
}


@pytest.mark.parametrize("flags", list(COMPOSE_FLAGS.values()), ids=list(COMPOSE_FLAGS))
def test_composed_train_py_lints_clean(flags: list[str], tmp_path: Path) -> None:
    out = tmp_path / "train.py"
    proc = run_cli("compose", *flags, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    findings = lint_source(out.read_text(encoding="utf-8"), str(out))
    assert findings == [], [f"{f.line}: {f.rule} {f.message}" for f in findings]


# --- each safe fix yields code that runs and passes checks the original fails ---------------

_ORIGINAL_WARNS = '''
import warnings as _warnings


def _original_warns(source):
    """Whether the unfixed program raises a deprecation warning made an error."""
    with _warnings.catch_warnings():
        _warnings.simplefilter("error", FutureWarning)
        _warnings.simplefilter("error", DeprecationWarning)
        try:
            exec(compile(source, "original", "exec"), {"__name__": "original"})
        except (FutureWarning, DeprecationWarning):
            return True
    return False


assert _original_warns(ORIGINAL), "the unfixed program should warn"
'''


@dataclass(frozen=True)
class FixCase:
    """A program that uses a rule's pattern, and checks on what the fixed program does."""

    code: str
    checks: str
    deprecated: bool = False  # the original must raise a deprecation warning
    cuda: bool = False  # the program needs a GPU to mean anything


def _before(tip_id: str) -> str:
    tip = _tips()[tip_id]
    assert tip.before is not None
    return tip.before.code


FIX_CASES: dict[str, FixCase] = {
    "PTT001": FixCase(
        code=(
            "import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\nmodel = nn.Linear(8, 8)\n"
            "x = torch.randn(4, 8)\n\n\n@torch.cpu.amp.autocast(enabled=False)\ndef full(x):\n"
            "    return model(x)\n\n\nwith torch.cpu.amp.autocast(True, torch.bfloat16):\n"
            "    y = model(x)\n    z = full(x)\n"
        ),
        checks="assert y.dtype == torch.bfloat16, y.dtype\nassert z.dtype == torch.float32, z.dtype\n",
        deprecated=True,
    ),
    "PTT002": FixCase(
        code=(
            "import torch\n\nscaler = torch.cpu.amp.GradScaler(init_scale=4.0)\n"
            "off = torch.cuda.amp.GradScaler(enabled=False)\nloss = torch.tensor(1.5)\n"
        ),
        checks=(
            "assert torch.equal(scaler.scale(loss), loss * 4)\n"
            "assert not off.is_enabled() and off.scale(loss) is loss\n"
        ),
        deprecated=True,
    ),
    "PTT003": FixCase(
        code=(
            "import torch\n\n\nclass Square(torch.autograd.Function):\n    @staticmethod\n"
            "    @torch.cuda.amp.custom_fwd\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n"
            "        return x * x\n\n    @staticmethod\n    @torch.cuda.amp.custom_bwd\n"
            "    def backward(ctx, g):\n        (x,) = ctx.saved_tensors\n        return 2 * x * g\n\n\n"
            "x = torch.arange(3.0, requires_grad=True)\nSquare.apply(x).sum().backward()\n"
        ),
        checks="assert x.grad.tolist() == [0.0, 2.0, 4.0]\n",
        deprecated=True,
    ),
    "PTT004": FixCase(
        code=(
            "import torch\n\nx = torch.randn(1024, 1024, device='cuda')\ndel x\n"
            "torch.cuda.reset_max_memory_allocated()\nbefore = torch.cuda.max_memory_allocated()\n"
            "y = torch.randn(256, device='cuda')\n"
        ),
        checks="assert torch.cuda.max_memory_allocated() - before < 1024 * 1024 * 4\n",
        deprecated=True,
        cuda=True,
    ),
    "PTT005": FixCase(
        code="import torch\n\nx = torch.randn(1024, device='cuda')\nused = torch.cuda.memory_cached()\n",
        checks="assert used >= x.numel() * 4\n",
        deprecated=True,
        cuda=True,
    ),
    "PTT008": FixCase(
        code=(
            "import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\nmodel = nn.Linear(16, 16)\n"
            "(100 * model(torch.randn(8, 16))).square().sum().backward()\n"
            "norm = nn.utils.clip_grad_norm(model.parameters(), 1.0)\n"
        ),
        checks=(
            "after = torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in model.parameters()]))\n"
            "assert norm > 1.0 and after <= 1.0 + 1e-4, (norm, after)\n"
        ),
        deprecated=True,
    ),
    "PTT009": FixCase(
        code=(
            "import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\nlayer = nn.Linear(400, 600)\n"
            "nn.init.xavier_normal(layer.weight)\nnn.init.constant(layer.bias, 0.5)\n"
        ),
        checks=(
            "import math\nstd = layer.weight.std().item()\n"
            "assert abs(std - math.sqrt(2 / (400 + 600))) < 0.002, std\n"
            "assert torch.all(layer.bias == 0.5)\n"
        ),
        deprecated=True,
    ),
    "PTT011": FixCase(
        code=(
            "import io\n\nimport torch\n\n\ndef load(f):\n    return torch.load(f)\n\n\n"
            "buffer = io.BytesIO()\ntorch.save({'w': torch.arange(4.0)}, buffer)\nbuffer.seek(0)\n"
            "state = load(buffer)\n"
        ),
        checks=(
            "import pickle\nassert torch.equal(state['w'], torch.arange(4.0))\n\n\n"
            "class Payload:\n    pass\n\n\nevil = io.BytesIO()\ntorch.save(Payload(), evil)\nevil.seek(0)\n"
            "try:\n    load(evil)\nexcept pickle.UnpicklingError:\n    pass\n"
            "else:\n    raise AssertionError('an arbitrary object was unpickled')\n"
        ),
    ),
    "PTT015": FixCase(
        code="<before:create-tensors-on-device>",
        checks=(
            "from torch.overrides import TorchFunctionMode\n\n\n"
            "class RecordDevices(TorchFunctionMode):\n    def __init__(self):\n        super().__init__()\n"
            "        self.made = []\n\n    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
            "        out = func(*args, **(kwargs or {}))\n        if isinstance(out, torch.Tensor):\n"
            "            self.made.append((getattr(func, '__name__', str(func)), out.device.type))\n"
            "        return out\n\n\n"
            "with RecordDevices() as rec:\n    build(torch.device('meta'))\n"
            "# the fixed factories now allocate on the target device itself\n"
            "assert ('zeros', 'meta') in rec.made and ('tensor', 'meta') in rec.made, rec.made\n"
            "assert ('zeros', 'cpu') not in rec.made and ('tensor', 'cpu') not in rec.made, rec.made\n"
            "assert mask.device.type == device.type and not mask.any()\n"
            "assert positions.tolist() == list(range(256))\n"
        ),
    ),
    "PTT054": FixCase(
        code=(
            "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "data = TensorDataset(torch.arange(12.0).view(6, 2), torch.arange(6))\n"
            "loader = DataLoader(data, batch_size=2, pin_memory=torch.cuda.is_available())\n"
            "model = torch.nn.Linear(2, 1).to(device)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n\n\n"
            "def train(loader):\n    seen = []\n    for x, y in loader:\n        x = x.to(device)\n"
            "        loss = model(x).sum()\n        loss.backward()\n        optimizer.step()\n"
            "        seen.append(x)\n    return seen\n\n\nseen = train(loader)\n"
        ),
        checks=(
            "from torch.overrides import TorchFunctionMode\n\n\n"
            "class RecordCopies(TorchFunctionMode):\n    def __init__(self):\n        super().__init__()\n"
            "        self.flags = []\n\n    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
            "        if getattr(func, '__name__', '') == 'to':\n"
            "            self.flags.append((kwargs or {}).get('non_blocking', False))\n"
            "        return func(*args, **(kwargs or {}))\n\n\n"
            "# the batches arrive unchanged...\n"
            "assert torch.equal(torch.cat([t.cpu() for t in seen]), torch.arange(12.0).view(6, 2))\n"
            "# ...and every copy of a batch is now non-blocking\n"
            "with RecordCopies() as rec:\n    train(loader)\n"
            "assert rec.flags and all(rec.flags), rec.flags\n"
        ),
    ),
    "PTT059": FixCase(
        code=(
            "import torch\nfrom torch import nn\n\nmodel = nn.Linear(2, 2)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=1.0)\n"
            "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.1)\n"
            "for _ in range(2):\n    optimizer.step()\n    scheduler.step()\n"
            "lr = scheduler.get_lr()[0]\n"
        ),
        # at the decay boundary get_lr() applies the decay once more: 0.01, not the 0.1 in use
        checks="assert lr == optimizer.param_groups[0]['lr'] == 0.1, lr\n",
    ),
    "PTT032": FixCase(
        code=(
            "import torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 4)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nmodel(torch.randn(2, 4)).sum().backward()\n"
            "opt.step()\nopt.zero_grad(set_to_none=False)\n"
        ),
        checks="assert all(p.grad is None for p in model.parameters())\n",
    ),
}


def test_every_fixable_rule_has_a_fix_case() -> None:
    assert set(FIX_CASES) == {r.code for r in RULES if r.fixable}


@pytest.mark.parametrize("code", sorted(FIX_CASES))
def test_safe_fix_runs_and_passes_checks(code: str) -> None:
    import torch

    from generator.records.harness import run_variant

    case = FIX_CASES[code]
    if case.cuda and not torch.cuda.is_available():
        pytest.skip("the program needs a CUDA device")
    rule = next(r for r in RULES if r.code == code)
    source = case.code
    if source.startswith("<before:"):
        source = _before(source.removeprefix("<before:").removesuffix(">"))
    assert code in _codes(lint_source(source, rules=[rule]))
    unsafe = rule.fix_safety == "unsafe"
    fixed, count = fix_source(source, rules=[rule], unsafe=unsafe)
    assert count >= 1 and fixed != source
    assert code not in {f.rule for f in lint_source(fixed, rules=[rule]) if f.edits}
    checks = case.checks
    if case.deprecated:
        checks = f"ORIGINAL = {source!r}\n{_ORIGINAL_WARNS}\n{checks}"
    result = run_variant(fixed, checks, f"fixed-{code}.py", device="cuda" if case.cuda else "cpu")
    assert result.ok, result.output


# --- the command line: bad input ------------------------------------------------------------

TEXT_LINE = re.compile(
    r"^(?P<path>.+):(?P<line>\d+):(?P<col>\d+): (?P<code>PTT\d{3}) \[(?P<severity>[^\]]+)\] "
    r"(?P<msg>.+?)(?: \((?P<tip_label>tip): |（(?P<tip_label_zh>技巧)：)(?P<tip>[a-z0-9-]+)[)）]$"
)
BAD_LOAD = 'import torch\nstate = torch.load("ckpt.pt")\n'


def _write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("content", "position", "reason"),
    [
        pytest.param(
            "import torch\ndef f(:\n    pass\n", ":2:7:", "syntax error", id="syntax-error"
        ),
        pytest.param(b"x = 1\ny = '\xff'\n", ":2:6:", "not valid utf-8", id="not-utf8"),
        pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ":1:1:", "binary file", id="binary"),
    ],
)
def test_unreadable_file_is_one_line_and_the_others_are_checked(
    content: str | bytes, position: str, reason: str, tmp_path: Path
) -> None:
    bad = _write(tmp_path, "bad.py", content)
    _write(tmp_path, "good.py", BAD_LOAD)
    proc = run_cli("lint", str(tmp_path))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith(f"{bad}{position}") and reason in errors[0]
    assert "PTT011" in proc.stdout  # the readable file was still checked
    assert "1 file could not be checked" in proc.stdout
    assert bad.read_bytes() == (content if isinstance(content, bytes) else content.encode())


def test_empty_file_is_clean(tmp_path: Path) -> None:
    empty = _write(tmp_path, "empty.py", "")
    proc = run_cli("lint", str(empty))
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == "No findings in 1 file.\n"


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli("lint", str(tmp_path / "nope.py"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {tmp_path / 'nope.py'}: no such file or directory"


def test_a_folder_of_thousands_of_files(tmp_path: Path) -> None:
    n = 3000
    for i in range(n):
        body = BAD_LOAD if i % 3 == 0 else f"x_{i} = {i}\n"
        _write(tmp_path / f"pkg{i % 10}", f"m{i}.py", body)
    _write(tmp_path / ".hidden", "skipped.py", BAD_LOAD)
    _write(tmp_path / "venv", "skipped.py", BAD_LOAD)
    _write(tmp_path / "env2", "pyvenv.cfg", "home = /usr\n")
    _write(tmp_path / "env2" / "lib", "skipped.py", BAD_LOAD)
    _write(tmp_path / "pkg0", "notes.txt", BAD_LOAD)
    result = lint_paths([tmp_path])
    assert result.files == n and not result.errors
    assert len(result.findings) == len(range(0, n, 3))
    proc = run_cli("lint", str(tmp_path), "--format", "json")
    assert proc.returncode == 1
    assert len(json.loads(proc.stdout)) == len(range(0, n, 3))


# --- output formats and exit codes ----------------------------------------------------------


def test_text_format(tmp_path: Path) -> None:
    path = _write(tmp_path, "train.py", BAD_LOAD + "torch.save(model, 'm.pt')\n")
    proc = run_cli("lint", str(path))
    assert proc.returncode == 1
    *lines, last = proc.stdout.splitlines()
    matches = [TEXT_LINE.match(line) for line in lines]
    assert all(matches), lines
    assert [(m["line"], m["col"], m["code"], m["severity"], m["tip"]) for m in matches if m] == [
        ("2", "9", "PTT011", "error", "save-load-state-dict"),
        ("3", "1", "PTT012", "error", "save-load-state-dict"),
    ]
    # the weights_only fix is unsafe: counted, but not as fixable by --fix alone
    assert last == "Found 2 findings in 1 of 1 file (1 more with --fix --unsafe-fixes)."


def test_text_format_in_chinese(tmp_path: Path) -> None:
    path = _write(tmp_path, "train.py", BAD_LOAD + "torch.save(model, 'm.pt')\n")
    proc = run_cli("lint", str(path), "--lang", "zh")
    assert proc.returncode == 1
    *lines, last = proc.stdout.splitlines()
    matches = [TEXT_LINE.match(line) for line in lines]
    assert all(matches) and [m["severity"] for m in matches if m] == ["错误", "错误"]
    assert {m["tip_label_zh"] for m in matches if m} == {"技巧"}  # （技巧：id）, full-width
    assert all(_CJK.search(m["msg"]) for m in matches if m)
    assert _CJK.search(last) and "2" in last


def test_json_format(tmp_path: Path) -> None:
    path = _write(tmp_path, "train.py", BAD_LOAD)
    proc = run_cli("lint", str(path), "--format", "json")
    assert proc.returncode == 1
    (item,) = json.loads(proc.stdout)
    assert list(item) == [
        "path",
        "line",
        "column",
        "rule",
        "tip",
        "message",
        "severity",
        "fixable",
        "fix",
    ]
    assert item | {"message": ""} == {
        "path": str(path),
        "line": 2,
        "column": 9,
        "rule": "PTT011",
        "tip": "save-load-state-dict",
        "message": "",
        "severity": "error",
        "fixable": False,  # only with --unsafe-fixes
        "fix": "unsafe",
    }


def test_sarif_format(tmp_path: Path) -> None:
    from generator.paths import site_url

    _write(tmp_path, "train.py", BAD_LOAD)
    _write(tmp_path, "broken.py", "def f(:\n")
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "lint", ".", "--format", "sarif"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(paths.ROOT)},
    )
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in RULES]
    for rule, descriptor in zip(RULES, rules, strict=True):
        base = site_url()  # "" unless the site's public address is set: no helpUri then
        assert descriptor.get("helpUri") == (f"{base}lint/rules/{rule.code}/" if base else None)
        if base:
            assert f"{base}tips/{rule.tip}/" in descriptor["help"]["text"]
        else:
            assert f"--explain {rule.code}" in descriptor["help"]["text"]
        assert descriptor["shortDescription"]["text"] == rule.message_in("en")
        assert descriptor["fullDescription"]["text"] == rule.description()
        assert descriptor["defaultConfiguration"]["level"] in {"error", "warning", "note"}
    (result,) = run["results"]
    assert result["ruleId"] == "PTT011" and rules[result["ruleIndex"]]["id"] == "PTT011"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] == 2 and location["region"]["startColumn"] == 9
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert "syntax error" in note["message"]["text"]
    assert run["invocations"][0]["executionSuccessful"] is False


def test_exit_codes(tmp_path: Path) -> None:
    clean = _write(tmp_path, "clean.py", "import torch\nx = torch.zeros(3)\n")
    dirty = _write(tmp_path, "dirty.py", BAD_LOAD)
    assert run_cli("lint", str(clean)).returncode == 0
    assert run_cli("lint", str(dirty)).returncode == 1
    assert run_cli("lint", str(clean), "--format", "yaml").returncode == 2
    assert run_cli("lint").returncode == 2
    proc = run_cli("lint", str(clean), "--select", "XYZ1")
    assert proc.returncode == 2 and "unknown rule code 'XYZ1'" in proc.stderr


def test_select_and_ignore_take_codes_and_prefixes(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.py", BAD_LOAD + "torch.save(model, 'm.pt')\n")

    def codes(*args: str) -> set[str]:
        proc = run_cli("lint", str(path), "--format", "json", *args)
        return {item["rule"] for item in json.loads(proc.stdout)}

    assert codes() == {"PTT011", "PTT012"}
    assert codes("--select", "PTT011") == {"PTT011"}
    assert codes("--select", "ptt01") == {"PTT011", "PTT012"}
    assert codes("--ignore", "PTT011") == {"PTT012"}
    assert codes("--select", "PTT01", "--ignore", "PTT012,PTT013") == {"PTT011"}
    assert codes("--select", "PTT02") == set()


def test_noqa(tmp_path: Path) -> None:
    source = (
        "import torch\n"
        "a = torch.load('a.pt')  # noqa: PTT011\n"
        "b = torch.load('b.pt')  # noqa: PTT012\n"
        "c = torch.load('c.pt')  # noqa\n"
        "d = torch.load('d.pt')  # NOQA:PTT012, PTT011\n"
    )
    findings = lint_source(source)
    assert [(f.line, f.rule) for f in findings] == [(3, "PTT011")]


def test_fix_and_diff(tmp_path: Path) -> None:
    source = (
        "import torch\n\nscaler = torch.cuda.amp.GradScaler()\n"
        "state = torch.load('ckpt.pt')\ntorch.save(model, 'm.pt')\n"
    )
    path = _write(tmp_path, "train.py", source)
    broken = _write(tmp_path, "broken.py", "import torch\nx = torch.load('a')\ndef f(:\n")
    path.chmod(0o640)

    proc = run_cli("lint", str(tmp_path), "--diff")
    assert proc.returncode == 1
    assert path.read_text(encoding="utf-8") == source  # --diff writes nothing
    assert f"--- {path}" in proc.stdout and f"+++ {path}" in proc.stdout
    assert '+scaler = torch.amp.GradScaler("cuda")' in proc.stdout
    assert "weights_only" not in proc.stdout  # unsafe: not without --unsafe-fixes
    assert "Would fix 1 finding in 1 file." in proc.stderr
    proc = run_cli("lint", str(tmp_path), "--diff", "--unsafe-fixes")
    assert "+state = torch.load('ckpt.pt', weights_only=True)" in proc.stdout
    assert "Would fix 2 findings in 1 file." in proc.stderr

    proc = run_cli("lint", str(tmp_path), "--fix")
    assert proc.returncode == 1  # the whole-model save has no fix, the load only an unsafe one
    assert path.read_text(encoding="utf-8") == source.replace(
        "torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cuda")'
    )
    assert "Fixed 1 finding." in proc.stdout and "1 more with --fix --unsafe-fixes" in proc.stdout
    proc = run_cli("lint", str(tmp_path), "--fix", "--unsafe-fixes")
    assert proc.returncode == 1  # the whole-model save has no fix
    fixed = path.read_text(encoding="utf-8")
    assert fixed == (
        'import torch\n\nscaler = torch.amp.GradScaler("cuda")\n'
        "state = torch.load('ckpt.pt', weights_only=True)\ntorch.save(model, 'm.pt')\n"
    )
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)
    assert broken.read_text(encoding="utf-8").endswith("def f(:\n")  # never rewritten
    assert "PTT012" in proc.stdout and "Fixed 1 finding." in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.py", "train.py"]  # no temp files

    proc = run_cli("lint", str(path), "--diff", "--unsafe-fixes")
    assert proc.returncode == 0 and proc.stdout == ""


def test_fix_keeps_a_declared_encoding(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\nimport torch\n# caf\xe9\nx = torch.load('a.pt')\n"
    path = _write(tmp_path, "old.py", source.encode("latin-1"))
    assert run_cli("lint", str(path), "--fix", "--unsafe-fixes").returncode == 0
    assert path.read_bytes() == source.replace("'a.pt')", "'a.pt', weights_only=True)").encode(
        "latin-1"
    )


def test_lint_does_not_import_torch(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.py", BAD_LOAD)
    code = (
        "import sys, contextlib, io\n"
        "from generator.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main(['lint', {str(path)!r}, '--format', 'sarif'])\n"
        "assert rc == 1, rc\n"
        "heavy = [m for m in ('torch', 'numpy', 'pydantic') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=paths.ROOT
    )
    assert proc.returncode == 0, proc.stderr


# --- what the lead wires in: pre-commit, the page, the records ------------------------------


def test_pre_commit_hook_definition() -> None:
    hooks = yaml.safe_load((paths.ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = hooks
    assert hook["id"] == "pytorch-tips-lint"
    assert hook["entry"] == "pytorch-tips lint"
    assert hook["language"] == "python" and hook["types"] == ["python"]
    pyproject = (paths.ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'pytorch-tips = "generator.cli:main"' in pyproject


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lint_page(lang: str) -> None:
    from generator.lint.docs import page_markdown

    text = page_markdown(lang)
    # nothing left unrendered (a GitHub Actions expression, ${{ ... }}, is the page's text)
    assert "{{" not in text.replace("${{", "") and "{%" not in text
    for rule in RULES:
        row = next(
            line
            for line in text.splitlines()
            if line.startswith(f"| [`{rule.code}`](lint/rules/{rule.code}.md) |")
        )
        assert f"](tips/{rule.tip}.md)" in row
        assert _tips()[rule.tip].title.get(lang) in row
        assert rule.message_in(lang).replace("|", "\\|") in row
    assert "id: pytorch-tips-lint" in text
    assert text.count("| [`PTT") == len(RULES)
    assert "[tool.pytorch-tips.lint]" in text and "--unsafe-fixes" in text
