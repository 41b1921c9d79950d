"""The ``compose`` subcommand's flags: `add_arguments` adds them to a parser (their
help names the tips each applies), `options_from_args` turns them into
`generator.compose.options.ComposeOptions`."""

from __future__ import annotations

import argparse
import textwrap
from dataclasses import fields
from typing import Any

from generator.compose.options import (
    AMP_DTYPES,
    DEVICES,
    ComposeError,
    ComposeOptions,
    validate,
)
from generator.compose.tips import read_tips_by_feature

#: Help text of each feature's flag (the tips it applies are added when --help is shown).
FLAG_HELP: dict[str, str] = {
    "amp": "mixed precision: torch.amp.autocast around forward and loss; GradScaler for fp16",
    "accum": "accumulate gradients over N micro-batches per optimizer step (loss / N; no "
    "DDP all-reduce on the N-1 others; a trailing partial group per epoch is skipped)",
    "ddp": "DistributedDataParallel under torchrun (NCCL on CUDA, gloo on CPU), "
    "DistributedSampler.set_epoch, rank-0 logging and checkpoints; runs without torchrun too",
    "compile": "torch.compile the model (in place, before DDP)",
    "channels-last": "channels_last (NHWC) memory format for the model and its inputs",
    "activation-checkpointing": "recompute each conv block's activations in backward "
    "(torch.utils.checkpoint, use_reentrant=False)",
    "clip-grad-norm": "clip the global gradient norm to X (after GradScaler.unscale_ under fp16)",
    "tf32": "TF32 tensor cores for fp32 matmuls and convolutions (CUDA, Ampere+)",
    "cudnn-benchmark": "let cuDNN time convolution algorithms and keep the fastest (fixed shapes)",
    "deterministic": "torch.use_deterministic_algorithms(True) and a fixed cuBLAS workspace",
    "seed": "seed Python, NumPy (if present) and torch with N by default; DataLoader workers "
    "from a seeded generator; their states saved in checkpoints",
    "workers": "N DataLoader worker processes (persistent), pin_memory and non_blocking "
    "copies on CUDA: for datasets that decode or augment each sample, not for tensors in "
    "memory (read a batch at a time without them)",
    "fused-optimizer": "fused AdamW: one kernel for the whole update",
    "no-decay-norm-bias": "parameter groups: no weight decay on biases and norm parameters",
    "profile": "trace a few steps with torch.profiler, written to the output folder",
    "memory-stats": "log peak memory per log interval",
    "eval-every": "evaluate every N steps under model.eval() and torch.inference_mode()",
}

_ALWAYS_TIPS = "<always-tips>"

_VALUES: dict[str, tuple[type, str]] = {
    "accum": (int, "N"),
    "clip-grad-norm": (float, "X"),
    "seed": (int, "N"),
    "workers": (int, "N"),
    "eval-every": (int, "N"),
}


class _TipHelpFormatter(argparse.HelpFormatter):
    """Adds the tips each flag applies to its help, reading the records only for --help."""

    _by_feature: dict[str, list[str]] | None = None

    @classmethod
    def _tips(cls, feature: str) -> str:
        if cls._by_feature is None:
            cls._by_feature = read_tips_by_feature()
        ids = cls._by_feature.get(feature, [])
        return f"[tip: {', '.join(ids)}]" if ids else "[no tip yet]"

    def _expand_help(self, action: argparse.Action) -> str:
        text = super()._expand_help(action)
        feature = getattr(action, "feature", None)
        return text if feature is None else f"{text} {self._tips(feature)}"

    def _format_text(self, text: str) -> str:
        if _ALWAYS_TIPS in text:
            text = text.replace(_ALWAYS_TIPS, self._tips("always"))
        return super()._format_text(text)

    # Tip ids are hyphenated: wrap lines between words only, never inside an id.
    def _split_lines(self, text: str, width: int) -> list[str]:
        text = " ".join(text.split())
        return textwrap.wrap(text, width, break_on_hyphens=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        text = " ".join(text.split())
        return textwrap.fill(
            text, width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the composer's flags to ``parser`` (the ``compose`` subcommand)."""
    parser.formatter_class = _TipHelpFormatter
    group = parser.add_argument_group("features (each applies the tips named in brackets)")
    for feature, help_ in FLAG_HELP.items():
        flag = f"--{feature}"
        if feature in _VALUES:
            kind, metavar = _VALUES[feature]
            action = group.add_argument(flag, type=kind, metavar=metavar, help=help_)
        else:
            action = group.add_argument(flag, action="store_true", help=help_)
        action.feature = feature  # type: ignore[attr-defined]
        if feature == "amp":
            group.add_argument(
                "--amp-dtype",
                choices=AMP_DTYPES,
                help="autocast dtype (default: auto = bf16 on CPU and on CUDA compute "
                "capability 8.0+, else fp16 with a GradScaler)",
            )
    parser.add_argument_group(
        "always applied",
        "zero_grad(set_to_none=True), the loss read once per log interval, tensors created "
        f"on the device, torch.load(weights_only=True) {_ALWAYS_TIPS}",
    )
    out = parser.add_argument_group("target and output")
    out.add_argument(
        "--device",
        choices=DEVICES,
        default="auto",
        help="the script's default device (default: auto = cuda if available, else cpu)",
    )
    out.add_argument("-o", "--output", metavar="PATH", help="write here (default: stdout)")
    out.add_argument("--force", action="store_true", help="overwrite PATH if it exists")


def options_from_args(args: argparse.Namespace) -> ComposeOptions:
    """Build and validate `ComposeOptions` from parsed ``compose`` arguments.

    Raises:
        ContradictoryOptions: the flags contradict each other.
    """
    values: dict[str, Any] = {}
    for field in fields(ComposeOptions):
        value = getattr(args, field.name, None)
        if value is not None:
            values[field.name] = value
    options = ComposeOptions(**values)
    validate(options)
    return options


def parse_flags(flags: list[str]) -> ComposeOptions:
    """Parse composer flags (``["--amp", "--accum", "4"]``) the way the CLI does.

    Raises:
        ComposeError: the flags do not parse.
        ContradictoryOptions: they contradict each other.
    """
    parser = argparse.ArgumentParser(prog="compose", add_help=False)
    add_arguments(parser)
    try:
        args = parser.parse_args(flags)
    except SystemExit:
        raise ComposeError(f"bad composer flags: {' '.join(flags)}") from None
    return options_from_args(args)
