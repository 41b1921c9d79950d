"""The composer: write a ``train.py`` that applies exactly the chosen tips.

``python -m generator compose --amp --accum 4 --ddp -o train.py`` turns composer flags into a
:class:`ComposeOptions`, rejects contradictory choices (:class:`ContradictoryOptions`, exit 2,
before anything is written), renders ``templates/compose/train.py.j2`` and writes the result
atomically. Every block of the script cites the tips behind it (``# tip: <id> (tips/<id>/)``):
the tips whose record declares ``compose: <feature>`` for a chosen feature, and the
``compose: always`` tips on the blocks every script has.

This module imports neither torch nor Jinja at import time, so building the CLI parser stays
cheap; rendering imports Jinja, and the tip records are read only when composing.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.errors import UserError
from generator.taxonomy import COMPOSE_FEATURES

if TYPE_CHECKING:
    from generator.schema import Tip

#: The flags every pairwise combination is tested with (``tests/test_compose.py``).
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
TEMPLATE = "compose/train.py.j2"
_ID = r"[a-z0-9]+(?:-[a-z0-9]+)*"  # generator.schema.ID_PATTERN, without importing pydantic


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


# --- tips ---------------------------------------------------------------------------------

#: Blocks that cite only some of a feature's tips: those with one of the words in their id.
#: Any other block named ``<feature>`` or ``<feature>.<part>`` cites the feature's remaining
#: tips, the ones that no specific block of the same script cites; so every tip of a chosen
#: feature is cited at least once, and a specific block that matches nothing cites nothing.
BLOCK_WORDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "always.zero-grad": ("always", ("zero-grad",)),
    "always.detach": ("always", ("detach",)),
    "always.sync": ("always", ("sync",)),
    "always.device": ("always", ("on-device",)),
    "always.load": ("always", ("weights-only", "load", "state-dict")),
    "amp.scaler": ("amp", ("scaler",)),
    "accum.no-sync": ("accum", ("no-sync",)),
    "ddp.sampler": ("ddp", ("sampler",)),
    "ddp.rank-zero": ("ddp", ("rank-zero", "unwrap", "save")),
    "clip-grad-norm.unscale": ("clip-grad-norm", ("unscale",)),
    "workers.pin": ("workers", ("pin", "non-blocking")),
    "seed.loader": ("seed", ("worker", "loader")),
}


def tips_by_feature(tips: Iterable[Tip]) -> dict[str, list[str]]:
    """Map each composer feature to the ids of the tips declaring it (sorted).

    Features that no tip declares are absent.
    """
    out: dict[str, list[str]] = {}
    for tip in tips:
        if tip.compose is not None and tip.id:
            out.setdefault(tip.compose, []).append(tip.id)
    return {feature: sorted(ids) for feature, ids in out.items()}


def read_tips_by_feature(folder: Path | None = None) -> dict[str, list[str]]:
    """Like :func:`tips_by_feature`, reading only the ``compose`` field of each record.

    The composer must answer in well under a second, and validating every record takes
    longer than that, so this parses the YAML (with libyaml when present) and nothing more.
    Files that ``python -m generator validate`` would skip are skipped; a file that does
    not parse, or whose ``compose`` is not a known feature, cites nothing.
    ``python -m generator validate`` is what checks the records.

    Args:
        folder: the records' folder (default: ``tips/``).
    """
    import yaml

    from generator import paths

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out: dict[str, list[str]] = {}
    for path in sorted((folder or paths.TIPS).glob("*.yaml")):
        if path.name.startswith(("_", ".")) or not re.fullmatch(_ID, path.stem):
            continue
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        feature = data.get("compose") if isinstance(data, dict) else None
        if isinstance(feature, str) and feature in COMPOSE_FEATURES:
            out.setdefault(feature, []).append(path.stem)
    return out


class _Citations:
    """Resolves a template block name to the tip ids it cites (see :data:`BLOCK_WORDS`)."""

    def __init__(self, by_feature: Mapping[str, list[str]], blocks: set[str]):
        self.by_feature = by_feature
        self.blocks = blocks  # the blocks the script contains (first rendering pass)

    def ids(self, block: str) -> list[str]:
        feature, words = BLOCK_WORDS.get(block, (block.split(".")[0], ()))
        tips = self.by_feature.get(feature, [])
        if words:
            return [t for t in tips if any(w in t for w in words)]
        claimed = {
            t
            for name, (feat, ws) in BLOCK_WORDS.items()
            if feat == feature and name in self.blocks
            for t in tips
            if any(w in t for w in ws)
        }
        return [t for t in tips if t not in claimed]


def _cite_function(citations: _Citations | None, seen: set[str]) -> Callable[..., str]:
    def cite(block: str, indent: int = 4) -> str:
        """Comment lines citing the tips of ``block``, each ending in a newline."""
        seen.add(block)
        if citations is None:
            return ""
        pad = " " * indent
        return "".join(f"{pad}# tip: {i} (tips/{i}/)\n" for i in citations.ids(block))

    return cite


def compose(
    options: ComposeOptions,
    cites: Mapping[str, Sequence[str]],
    script_name: str = "train.py",
) -> str:
    """Render the training script for ``options``.

    Args:
        options: the composer's choices (validated here).
        cites: feature -> ids of the tips that declare it, from :func:`tips_by_feature` or
            :func:`read_tips_by_feature`. A feature without tips is applied uncited.
        script_name: the file name the docstring's run commands use.

    Returns:
        The script's source code, formatted as ``ruff format`` would.

    Raises:
        ContradictoryOptions: the options contradict each other.
    """
    from generator.render import render

    validate(options)
    context: dict[str, Any] = {
        "o": options,
        "command": options.command(),
        "script": script_name,
    }
    # Pass 1 learns which blocks this script has, so a feature's main block can cite exactly
    # the tips that no more specific block of the same script cites.
    blocks: set[str] = set()
    render(TEMPLATE, cite=_cite_function(None, blocks), **context)
    citations = _Citations({f: sorted(ids) for f, ids in cites.items()}, blocks)
    return render(TEMPLATE, cite=_cite_function(citations, set()), **context)


#: A Markdown line that stands for the script composed with its flags, e.g.
#: ``<!-- compose: --amp --accum 4 --ddp -->`` in ``docs/composer.md``.
PLACEHOLDER = re.compile(r"^<!-- compose:(?P<flags>[^>]*)-->$", re.M)


def expand_placeholders(markdown: str, cites: Mapping[str, Sequence[str]]) -> str:
    """Replace each :data:`PLACEHOLDER` line of ``markdown`` with the composed script.

    The script comes as a fenced ``python`` block, so the docs always show what the composer
    writes today.

    Raises:
        ContradictoryOptions: a placeholder's flags contradict each other.
        ComposeError: a placeholder's flags do not parse.
    """

    def script(match: re.Match[str]) -> str:
        parser = argparse.ArgumentParser(prog="compose placeholder", add_help=False)
        add_arguments(parser)
        try:
            args = parser.parse_args(match["flags"].split())
        except SystemExit:
            raise ComposeError(f"bad flags in {match[0]!r}") from None
        text = compose(options_from_args(args), cites)
        return f"``` python\n{text}```"

    return PLACEHOLDER.sub(script, markdown)


def cited_tips(script: str) -> list[str]:
    """The tip ids a composed script cites, in order of first appearance."""
    out: list[str] = []
    for line in script.splitlines():
        text = line.strip()
        if text.startswith("# tip: "):
            tip_id = text.removeprefix("# tip: ").split(" ", 1)[0]
            if tip_id not in out:
                out.append(tip_id)
    return out


def write_script(text: str, path: Path, force: bool = False) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file, then ``os.replace``).

    The new file gets the usual permissions (0666 minus the umask), not a temporary file's.

    Raises:
        OutputExists: ``path`` exists and ``force`` is false, or it is a folder.
    """
    if path.is_dir():
        raise OutputExists(f"{path} is a folder: give the script's file name")
    if path.exists() and not force:
        raise OutputExists(f"{path} exists: use --force to overwrite it")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# --- command line ---------------------------------------------------------------------------

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
    "copies on CUDA",
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
    """Build and validate :class:`ComposeOptions` from parsed ``compose`` arguments.

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
