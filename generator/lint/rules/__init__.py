"""Every lint rule, in code order. One class per rule, grouped by topic:

* `.amp`: mixed precision (the deprecated ``torch.cuda.amp`` namespace, half-precision models);
* `.stale`: other deprecated APIs that warn (``clip_grad_norm``, TorchScript, memory stats);
* `.legacy`: habits from before PyTorch 0.4 (``Variable``, ``.data``, typed tensor classes);
* `.checkpoint`: saving and loading;
* `.tensors`: tensors made from NumPy data and factory functions;
* `.data`: data loading;
* `.sync`: host-device synchronisations on every step;
* `.loop`: what else a training loop keeps or does every step;
* `.accumulate`: gradient accumulation;
* `.order`: the order of the calls of a step;
* `.modes`: train and eval modes;
* `.gan`: generator and discriminator steps;
* `.model`: how models are built, wrapped and initialised;
* `.forward`: what the forward pass computes and keeps for backward;
* `.runtime`: global switches, debugging aids and evaluation modes;
* `.timing`: profiling and timing.

`.steps` holds what the every-step rules share.

Codes are stable: a removed rule's code is never given to another rule.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from generator.lint.rules.base import Rule

#: The topic modules, in the order of the list above: a new one is added here, and only here
#: (tests/lint/test_lint.py fails for a module of rules that is missing).
TOPICS = (
    "amp",
    "stale",
    "legacy",
    "checkpoint",
    "tensors",
    "data",
    "sync",
    "loop",
    "accumulate",
    "order",
    "modes",
    "gan",
    "model",
    "forward",
    "runtime",
    "timing",
)
MODULES: tuple[ModuleType, ...] = tuple(import_module(f"{__name__}.{name}") for name in TOPICS)


def _collect() -> tuple[type[Rule], ...]:
    found = [
        obj
        for module in MODULES
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, Rule)
        and obj is not Rule
        and obj.__module__ == module.__name__
    ]
    return tuple(sorted(found, key=lambda r: r.code))


RULES: tuple[type[Rule], ...] = _collect()
