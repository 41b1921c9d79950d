"""The fields of `generator.compose.options.ComposeOptions`, one per option of
`generator.compose.catalog.OPTIONS`, in its order.

Generated from the catalog by ``python -m generator snippets`` (`generator.compose.codegen`);
``python -m generator check`` fails when it is stale. Do not edit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class OptionFields:
    """The composer's choices, one field per option (``clip_grad_norm`` for
    ``--clip-grad-norm``). The defaults compose the plain conv-net script."""

    #: --model {convnet,gpt}
    model: Literal["convnet", "gpt"] = "convnet"
    #: --amp
    amp: bool = False
    #: --amp-dtype {auto,bf16,fp16}
    amp_dtype: Literal["auto", "bf16", "fp16"] | None = None
    #: --accum N
    accum: int = 1
    #: --ddp
    ddp: bool = False
    #: --fsdp
    fsdp: bool = False
    #: --fsdp-no-sync-accum
    fsdp_no_sync_accum: bool = False
    #: --async-checkpoint
    async_checkpoint: bool = False
    #: --compile
    compile: bool = False
    #: --channels-last
    channels_last: bool = False
    #: --activation-checkpointing [{full,selective}]
    activation_checkpointing: Literal["full", "selective"] | None = None
    #: --clip-grad-norm X
    clip_grad_norm: float | None = None
    #: --ema DECAY
    ema: float | None = None
    #: --tf32
    tf32: bool = False
    #: --cudnn-benchmark
    cudnn_benchmark: bool = False
    #: --deterministic
    deterministic: bool = False
    #: --seed N
    seed: int | None = None
    #: --workers N
    workers: int = 0
    #: --fused-optimizer
    fused_optimizer: bool = False
    #: --no-decay-norm-bias
    no_decay_norm_bias: bool = False
    #: --profile
    profile: bool = False
    #: --memory-stats
    memory_stats: bool = False
    #: --eval-every N
    eval_every: int | None = None
    #: --device {auto,cpu,cuda}
    device: Literal["auto", "cpu", "cuda"] = "auto"
