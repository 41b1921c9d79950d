"""The values tests/lint/test_fix_equivalence.py gives the names an example leaves free
(its ``STUBS``): a world's code imports this module as ``_w``."""

from __future__ import annotations

from typing import Any

import torch


def model(device: Any = None) -> torch.nn.Module:
    """A small model with gradients (a step has run backward), on ``device`` if given."""
    m = torch.nn.Linear(4, 4)
    m(torch.ones(2, 4)).square().sum().backward()
    return m if device is None else m.to(device)


def optimizer(m: torch.nn.Module | None = None) -> torch.optim.Optimizer:
    return torch.optim.SGD((m or model()).parameters(), lr=0.1)


def scheduler(opt: torch.optim.Optimizer, steps: int) -> Any:
    """A StepLR(step_size=2, gamma=0.1) after ``steps`` epochs (2: at a decay boundary)."""
    s = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    for _ in range(steps):
        opt.step()
        s.step()
    return s


def dataset() -> torch.utils.data.Dataset:
    return torch.utils.data.TensorDataset(torch.randn(8, 4), torch.randn(8, 4))


def loss(out: torch.Tensor, target: torch.Tensor | None = None) -> torch.Tensor:
    return out.square().mean() if target is None else (out - target).square().mean()


def checkpoint(path: str) -> str:
    torch.save({"w": torch.arange(4.0), "step": 3}, path)
    return path


class NoOpScaler:
    """What scripts put beside a GradScaler when AMP is off."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = list(args) + sorted(kwargs.items())

    def is_enabled(self) -> bool:
        return False


def ddp(module: torch.nn.Module, **kwargs: Any) -> torch.nn.Module:
    """DistributedDataParallel without a process group: the module itself."""
    return module
