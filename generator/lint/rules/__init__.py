"""Every lint rule, in code order. One class per rule, grouped by topic:

* `.stale`: deprecated and legacy APIs (``torch.cuda.amp``, ``Variable``, ...);
* `.checkpoint`: saving and loading;
* `.data`: tensors made from data, data loading;
* `.loop`: what a training loop does every step;
* `.order`: the order of the calls of a step;
* `.model`: how models are built, wrapped and initialised;
* `.forward`: what the forward pass computes and keeps for backward;
* `.runtime`: global switches, profiling and timing.

Codes are stable: a removed rule's code is never given to another rule.
"""

from __future__ import annotations

from generator.lint.rules import checkpoint, data, forward, loop, model, order, runtime, stale
from generator.lint.rules.base import Rule


def _collect() -> tuple[type[Rule], ...]:
    found = [
        obj
        for module in (stale, checkpoint, data, loop, order, model, forward, runtime)
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, Rule)
        and obj is not Rule
        and obj.__module__ == module.__name__
    ]
    return tuple(sorted(found, key=lambda r: r.code))


RULES: tuple[type[Rule], ...] = _collect()
