"""The composer's choices: `ComposeOptions`, and `validate`, which rejects
contradictory ones before anything is written."""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.errors import UserError
from generator.records.taxonomy import COMPOSE_FEATURES

#: The flags every pairwise combination is tested with (``tests/compose/test_compose.py``).
CORE_FEATURES: tuple[str, ...] = (
    "amp",
    "accum",
    "ddp",
    "compile",
    "channels-last",
    "activation-checkpointing",
    "clip-grad-norm",
)

AMP_DTYPES = ("auto", "bf16", "fp16")
DEVICES = ("auto", "cpu", "cuda")


class ComposeError(UserError):
    """A composer request that cannot be honoured (exit status 2, nothing written)."""


class ContradictoryOptions(ComposeError):
    """Composer flags that contradict each other or are out of range."""


class OutputExists(ComposeError):
    """``-o PATH`` names an existing file and ``--force`` was not given."""


@dataclass(frozen=True)
class ComposeOptions:
    """The composer's choices. The defaults compose the plain script (every feature off).

    Attributes:
        amp: autocast around forward and loss (``--amp``).
        amp_dtype: ``auto`` (bf16 where supported, else fp16), ``bf16`` or ``fp16``; only with
            ``amp``. ``None`` means ``auto``.
        accum: micro-batches per optimizer step (``--accum N``); 1 is off.
        ddp: DistributedDataParallel under torchrun (``--ddp``).
        compile: ``torch.compile`` the model (``--compile``).
        channels_last: NHWC memory format for model and inputs (``--channels-last``).
        activation_checkpointing: recompute block activations in backward.
        clip_grad_norm: clip the global gradient norm to this value; ``None`` is off.
        tf32: TF32 matmuls and convolutions on CUDA (``--tf32``).
        cudnn_benchmark: let cuDNN time and pick convolution algorithms.
        deterministic: deterministic algorithms only (``--deterministic``).
        seed: seed Python, NumPy and torch with this default seed; ``None`` is off.
        workers: DataLoader worker processes, with pinned memory on CUDA; 0 is off.
        fused_optimizer: fused AdamW kernels (``--fused-optimizer``).
        no_decay_norm_bias: no weight decay on biases and norm parameters.
        profile: trace a few steps with ``torch.profiler`` (``--profile``).
        memory_stats: log peak memory per log interval (``--memory-stats``).
        eval_every: evaluate every N optimizer steps; ``None`` is off.
        device: default device of the script: ``auto``, ``cpu`` or ``cuda``.
    """

    amp: bool = False
    amp_dtype: str | None = None
    accum: int = 1
    ddp: bool = False
    compile: bool = False
    channels_last: bool = False
    activation_checkpointing: bool = False
    clip_grad_norm: float | None = None
    tf32: bool = False
    cudnn_benchmark: bool = False
    deterministic: bool = False
    seed: int | None = None
    workers: int = 0
    fused_optimizer: bool = False
    no_decay_norm_bias: bool = False
    profile: bool = False
    memory_stats: bool = False
    eval_every: int | None = None
    device: str = "auto"

    @property
    def dtype(self) -> str:
        """The autocast dtype choice (``auto``, ``bf16`` or ``fp16``)."""
        return self.amp_dtype or "auto"

    def enabled(self, feature: str) -> bool:
        """Whether ``feature`` (a key of ``COMPOSE_FEATURES``) is chosen; ``always`` is."""
        if feature == "always":
            return True
        value = getattr(self, _attr(feature))
        if feature == "accum":
            return value > 1
        if feature == "workers":
            return value > 0
        return value is not None and value is not False

    def features(self) -> list[str]:
        """The chosen features, ``always`` first, in the order of ``COMPOSE_FEATURES``."""
        return [f for f in COMPOSE_FEATURES if self.enabled(f)]

    def flags(self) -> list[str]:
        """The composer flags that produce these options, in canonical order."""
        out: list[str] = []
        for feature in self.features():
            if feature == "always":
                continue
            flag = f"--{feature}"
            value = getattr(self, _attr(feature))
            out += [flag] if isinstance(value, bool) else [flag, _fmt(value)]
            if feature == "amp" and self.dtype != "auto":
                out += ["--amp-dtype", self.dtype]
        if self.device != "auto":
            out += ["--device", self.device]
        return out

    def command(self) -> str:
        """The command line that regenerates this script (without ``-o``)."""
        return " ".join(["python -m generator compose", *self.flags()])


def _attr(feature: str) -> str:
    return feature.replace("-", "_")


def _fmt(value: object) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def validate(options: ComposeOptions) -> None:
    """Reject out-of-range values and contradictory choices.

    Raises:
        ContradictoryOptions: with a one-line message naming the flags involved.
    """
    o = options
    if o.accum < 1:
        raise ContradictoryOptions(
            f"--accum must be at least 1 (micro-batches per optimizer step), got {o.accum}"
        )
    if o.amp_dtype is not None and not o.amp:
        raise ContradictoryOptions("--amp-dtype needs --amp")
    if o.dtype not in AMP_DTYPES:
        raise ContradictoryOptions(f"--amp-dtype must be one of {', '.join(AMP_DTYPES)}")
    if o.device not in DEVICES:
        raise ContradictoryOptions(f"--device must be one of {', '.join(DEVICES)}")
    if o.clip_grad_norm is not None and not (
        math.isfinite(o.clip_grad_norm) and o.clip_grad_norm > 0
    ):
        raise ContradictoryOptions(
            f"--clip-grad-norm must be a positive number, got {o.clip_grad_norm}"
        )
    if o.workers < 0:
        raise ContradictoryOptions(f"--workers must be 0 or more, got {o.workers}")
    if o.eval_every is not None and o.eval_every < 1:
        raise ContradictoryOptions(f"--eval-every must be at least 1, got {o.eval_every}")
    if o.seed is not None and not 0 <= o.seed < 2**32:
        raise ContradictoryOptions(f"--seed must be in [0, 2**32), got {o.seed}")
    if o.deterministic and o.cudnn_benchmark:
        raise ContradictoryOptions(
            "--deterministic and --cudnn-benchmark contradict each other: benchmark mode "
            "picks convolution algorithms by timing them, so results vary between runs"
        )
    if o.device == "cpu":
        if o.amp and o.dtype == "fp16":
            raise ContradictoryOptions(
                "--amp-dtype fp16 needs a CUDA target: with --device cpu use bf16 or auto"
            )
        for flag, on in (("--tf32", o.tf32), ("--cudnn-benchmark", o.cudnn_benchmark)):
            if on:
                raise ContradictoryOptions(
                    f"{flag} only affects CUDA: it does nothing with --device cpu"
                )
