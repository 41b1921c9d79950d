"""The composer's options, defined once, as plain data: `OPTIONS` (each flag's name, kind,
default, help in English and Chinese, the models it applies to, the features it applies,
its range), `CONFLICTS` (what is refused together, and why) and the `CORE_FEATURES` the
tests pair up. Everything else derives from them (`generator.compose.options`): the
``compose`` flags, the checks, the composer page's tables and the browser's JSON."""

from __future__ import annotations

from typing import Any

from generator.compose.option_types import MODELS, Conflict, Feature, Option


def _flag(name: str, text: str, zh: str, **kwargs: Any) -> Option:
    """An on/off option that applies the feature of the same name."""
    kwargs.setdefault("features", (Feature(name.replace("_", "-")),))
    return Option(name, "flag", False, {"en": text, "zh": zh}, **kwargs)


def _value(name: str, kind: str, default: Any, text: str, zh: str, **kwargs: Any) -> Option:
    """An option that takes a value and applies the feature of the same name."""
    kwargs.setdefault("features", (Feature(name.replace("_", "-")),))
    return Option(name, kind, default, {"en": text, "zh": zh}, **kwargs)


_CONVNET, _GPT = ("convnet",), ("gpt",)

#: What every GPT script does, nanoGPT's defaults: warm-up then cosine decay, clipping,
#: weight decay on matrices only, bf16 autocast and TF32 on CUDA, and evaluation. Its
#: own flags (--lr-schedule constant, --clip-grad-norm 0, --no-amp, --eval-every 0)
#: turn them off at run time; the composer flags of the same features are the conv net's.
GPT_RECIPE = (
    "gpt",
    "amp",
    "lr-schedule",
    "clip-grad-norm",
    "no-decay-norm-bias",
    "tf32",
    "eval-every",
)

#: Every option, in the order of ``--help``, the docs' tables and a script's ``compose`` line.
OPTIONS: tuple[Option, ...] = (
    Option(
        "model",
        "choice",
        "convnet",
        {
            "en": "The workload: `convnet`, a small conv net on synthetic images; `gpt`, a "
            "decoder-only transformer on a token file or built-in text.",
            "zh": "工作负载：`convnet` 是在合成图像上训练的小型卷积网络；`gpt` 是在 token 文件或内置文本上"
            "训练的 decoder-only Transformer。",
        },
        group="model",
        choices=MODELS,
        # The GPT script's recipe, in every one of them (its own flags turn parts off).
        features=tuple(Feature(f, {"model": "gpt"}) for f in GPT_RECIPE),
    ),
    _flag(
        "amp",
        "Mixed precision: `torch.amp.autocast` around the forward pass and the loss only, not "
        "`backward()`; a `GradScaler` only where fp16 can be chosen. The GPT script does this "
        "by default (bf16 autocast on CUDA; under `--fsdp`, FSDP's `MixedPrecisionPolicy`), "
        "and its own `--no-amp` turns it off.",
        "混合精度：`torch.amp.autocast` 只包住前向传播和损失计算，不包 `backward()`；只有可能用到 fp16 时"
        "才创建 `GradScaler`。GPT 脚本默认就这样做（在 CUDA 上用 bf16 autocast，使用 FSDP 时改用 "
        "`MixedPrecisionPolicy`），运行时用它自己的 `--no-amp` 关闭。",
        models=_CONVNET,
    ),
    Option(
        "amp_dtype",
        "choice",
        None,
        {
            "en": "The autocast dtype of `--amp`: `auto` picks bf16 where the hardware has it "
            "(CPU, CUDA compute capability 8.0 and later) and fp16 with a `GradScaler` elsewhere.",
            "zh": "`--amp` 的 autocast 数据类型：`auto` 在硬件支持时（CPU，或计算能力 8.0 及以上的 CUDA GPU）"
            "用 bf16，否则用 fp16 加 `GradScaler`。",
        },
        choices=("auto", "bf16", "fp16"),
        models=_CONVNET,
        features=(),
    ),
    _value(
        "accum",
        "int",
        1,
        "Gradient accumulation over N micro-batches per optimizer step, so the step's "
        "gradient is that of the mean over all its samples (GPT: over all its tokens). Under "
        "`--ddp` the N−1 other micro-batches run under `no_sync()`, forward pass included; "
        "under `--fsdp` each micro-batch's gradients are reduce-scattered, as torchtitan does, "
        "so they stay sharded (see `--fsdp-no-sync-accum`).",
        "梯度累积：每次优化器更新累积 N 个微批次，这一步的梯度就是全部样本（GPT 为全部 token）平均损失的梯度。"
        "使用 `--ddp` 时，前 N−1 个微批次放在 `no_sync()` 里执行，连前向传播一起包住；使用 `--fsdp` 时，"
        "与 torchtitan 一样，每个微批次的梯度都做 reduce-scatter，梯度始终保持分片（见 "
        "`--fsdp-no-sync-accum`）。",
        metavar="N",
        minimum=1,
        maximum=1024,
    ),
    _flag(
        "ddp",
        "`DistributedDataParallel` under `torchrun` (NCCL on CUDA, gloo on CPU): every process "
        "reads its own share of each step's batch, and rank 0 alone logs and saves the "
        "unwrapped model. Without `torchrun` the same file runs as a world of one.",
        "分布式数据并行：在 `torchrun` 下使用 `DistributedDataParallel`（CUDA 用 NCCL，CPU 用 gloo）："
        "每个进程读取每步批次中属于自己的那一份，只有 rank 0 打日志、保存去掉包装的模型。不用 `torchrun` "
        "时，同一个文件按单进程运行。",
    ),
    _flag(
        "fsdp",
        "FSDP2: `fully_shard` on each block, then the root, on a model built on the meta "
        "device and initialised shard by shard (the same initial weights for a seed whatever "
        "the number of processes); checkpoints with `torch.distributed.checkpoint`, which "
        "resume on any number of processes.",
        "完全分片数据并行（FSDP2）：在 meta 设备上构建模型，先对每个 block、再对根模块调用 `fully_shard`，"
        "然后逐个分片初始化（同一种子下，无论多少进程，初始权重都相同）；用 `torch.distributed.checkpoint` "
        "保存分布式检查点，可以在任意数量的进程上恢复。",
        models=_GPT,
    ),
    _flag(
        "fsdp_no_sync_accum",
        "With `--fsdp` and `--accum`: no reduce-scatter but after a step's last micro-batch "
        "(`set_requires_gradient_sync(False)` on the others), which saves N−1 reduce-scatters "
        "a step but costs memory: FSDP then keeps every gradient unsharded, in fp32, on every "
        "GPU until the step's end: 4 bytes a parameter instead of 4 / N (0.5 GB at 124M "
        "parameters, 28 GB at 7B).",
        "配合 `--fsdp` 和 `--accum`：只在每步最后一个微批次之后做 reduce-scatter（其余微批次调用 "
        "`set_requires_gradient_sync(False)`），每步省下 N−1 次 reduce-scatter，但要付出显存："
        "在这一步结束之前，FSDP 在每块 GPU 上都保留未分片的 fp32 梯度，每个参数 4 字节，而不是 4 / N"
        "（1.24 亿参数时 0.5 GB，70 亿参数时 28 GB）。",
        models=_GPT,
        features=(),
    ),
    _flag(
        "async_checkpoint",
        "Save with `torch.distributed.checkpoint.async_save`: training goes on while a "
        "background thread writes the copy it took in host memory (one save in flight).",
        "用 `torch.distributed.checkpoint.async_save` 保存：训练继续进行，后台线程把已拷贝到内存的状态写入"
        "磁盘（同一时间只有一次保存在进行）。",
        models=_GPT,
        features=(),
    ),
    _flag(
        "compile",
        "`torch.compile`: the conv net in place, before the DDP wrapper; the GPT block by "
        "block (regional compilation, one compiled graph shared by all blocks), after "
        "activation checkpointing and before FSDP, as torchtitan orders them.",
        "`torch.compile`：卷积网络在套上 DDP 之前原地编译；GPT 逐个 block 编译（区域编译，"
        "所有 block 共用一个编译好的图），顺序与 torchtitan 相同：在激活重计算之后、FSDP 之前。",
        features=(Feature("compile"), Feature("compile-regional", {"model": "gpt"})),
    ),
    _flag(
        "channels_last",
        "The model and its inputs in the `channels_last` memory format.",
        "模型和输入都使用 `channels_last` 内存布局。",
        models=_CONVNET,
    ),
    Option(
        "activation_checkpointing",
        "choice",
        None,
        {
            "en": "Activation checkpointing: each block recomputed in `backward()` "
            "(`torch.utils.checkpoint`, `use_reentrant=False`). `selective` (GPT) keeps the "
            "outputs of the matmuls and of attention through a policy "
            "(`create_selective_checkpoint_contexts`) and recomputes the rest.",
            "zh": "激活重计算（activation checkpointing，又称梯度检查点）：每个 block 在 `backward()` 中重新计算"
            "（`torch.utils.checkpoint`，`use_reentrant=False`）。`selective`（GPT）通过策略"
            "（`create_selective_checkpoint_contexts`）保留矩阵乘法和注意力的输出，只重新计算其余部分。",
        },
        choices=("full", "selective"),
        const="full",
        features=(
            Feature("activation-checkpointing"),
            Feature("selective-checkpointing", {"activation_checkpointing": "selective"}),
        ),
    ),
    _value(
        "clip_grad_norm",
        "float",
        None,
        "`clip_grad_norm_` on the global gradient norm, after `scaler.unscale_()` when a "
        "GradScaler is in use; under `--fsdp` on the sharded gradients (DTensors), whose norm "
        "covers all shards. The GPT script clips at 1.0 by default and logs the norm; its "
        "own `--clip-grad-norm` changes that at run time.",
        "用 `clip_grad_norm_` 裁剪全局梯度范数；用到 GradScaler 时先调用 `scaler.unscale_()`；使用 `--fsdp` "
        "时直接作用于分片的梯度（DTensor），范数覆盖所有分片。GPT 脚本默认裁剪到 1.0，并记录这个范数；"
        "在运行时用它自己的 `--clip-grad-norm` 修改。",
        metavar="X",
        exclusive_minimum=0,
        models=_CONVNET,
    ),
    _value(
        "ema",
        "float",
        None,
        "An exponential moving average of the weights with this decay, updated after every "
        "step on each process's own shards (no communication), saved with the checkpoint and "
        "written by `--export-weights`.",
        "按这个衰减系数维护权重的指数移动平均（EMA），每步之后在各进程自己的分片上更新（没有通信），"
        "随训练检查点保存，`--export-weights` 导出的就是它。",
        metavar="DECAY",
        models=_GPT,
        exclusive_minimum=0,
        exclusive_maximum=1,
    ),
    _flag(
        "tf32",
        "TF32 tensor cores for fp32 matmuls and convolutions on CUDA. The GPT script does "
        "this in every case.",
        "CUDA 上的 fp32 矩阵乘法和卷积使用 TF32 Tensor Core。GPT 脚本总是这样做。",
        models=_CONVNET,
    ),
    _flag(
        "cudnn_benchmark",
        "`torch.backends.cudnn.benchmark = True` for the fixed input shapes.",
        "输入形状固定，设置 `torch.backends.cudnn.benchmark = True`。",
        models=_CONVNET,
    ),
    _flag(
        "deterministic",
        "`torch.use_deterministic_algorithms(True)` and the cuBLAS workspace setting it needs.",
        "`torch.use_deterministic_algorithms(True)`，以及它所需的 cuBLAS 工作区设置。",
    ),
    _value(
        "seed",
        "int",
        None,
        "Python, NumPy and torch seeded with N by default (the conv net also seeds its "
        "DataLoader and saves their states in checkpoints); the GPT draws its weights and "
        "batches from the seed in any case.",
        "默认用 N 为 Python、NumPy 和 torch 设置随机种子（卷积网络还为 DataLoader 设置种子，并把这些状态"
        "存进检查点）；GPT 无论如何都从种子生成初始权重和批次。",
        metavar="N",
        minimum=0,
        exclusive_maximum=2**32,
        features=(Feature("seed"), Feature("seed-loader", {"model": "convnet"})),
    ),
    _value(
        "workers",
        "int",
        0,
        "N persistent DataLoader workers, `pin_memory` and `non_blocking` copies on CUDA: for "
        "datasets that decode or augment each sample (see [below](#script)); they ignore "
        "SIGINT and SIGTERM, which the training process handles.",
        "N 个常驻的 DataLoader worker，CUDA 上启用 `pin_memory` 和 `non_blocking` 拷贝：适用于需要对"
        "每个样本解码或增强的数据集（见[下文](#script)）；worker 忽略 SIGINT 和 SIGTERM，由训练进程处理。",
        metavar="N",
        minimum=0,
        maximum=256,
        models=_CONVNET,
    ),
    _flag(
        "fused_optimizer",
        "`AdamW(fused=True)`: one kernel for the whole update.",
        "`AdamW(fused=True)`：一个 kernel 完成全部参数的更新。",
    ),
    _flag(
        "no_decay_norm_bias",
        "Two parameter groups: no weight decay on biases and norm parameters. The GPT script "
        "does this in every case.",
        "两个参数组：偏置和归一化层参数不做权重衰减。GPT 脚本总是这样做。",
        models=_CONVNET,
    ),
    _flag(
        "profile",
        "`torch.profiler` over steps 3 to 5; a Chrome/Perfetto trace per process in the output "
        "folder.",
        "用 `torch.profiler` 记录第 3 到第 5 步，每个进程在输出目录写一份 Chrome/Perfetto 跟踪文件。",
    ),
    _flag(
        "memory_stats",
        "Peak memory in each log line (CUDA: allocated tensors, reset every interval; CPU: "
        "peak resident set).",
        "每行日志带上峰值显存/内存（CUDA：已分配张量的峰值，每个日志间隔重置；CPU：进程的峰值常驻内存）。",
    ),
    _value(
        "eval_every",
        "int",
        None,
        "Evaluation every N steps under `model.eval()` and `torch.inference_mode()`: the "
        "held-out loss and accuracy, summed on the device. The GPT script evaluates in every "
        "case, every `--eval-every` steps of its own (100 by default).",
        "每 N 步在 `model.eval()` 和 `torch.inference_mode()` 下评估一次：留出数据上的损失和准确率，"
        "在设备上累加。GPT 脚本总会评估，间隔由它自己的 `--eval-every` 决定（默认 100 步）。",
        metavar="N",
        minimum=1,
        maximum=10**9,
        models=_CONVNET,
    ),
    Option(
        "device",
        "choice",
        "auto",
        {
            "en": "The script's default device (its own `--device` still overrides it).",
            "zh": "脚本的默认设备（脚本自己的 `--device` 仍可覆盖）。",
        },
        group="target",
        choices=("auto", "cpu", "cuda"),
    ),
)

_ONLY_CUDA = " only affects CUDA: it does nothing with --device cpu"
_ONLY_CUDA_ZH = " 只对 CUDA 起作用：用 --device cpu 时它什么也不做"

#: Choices the composer refuses together, checked in this order after the ranges; an option
#: with a model outside its `Option.models` is refused first (`model_conflicts`).
CONFLICTS: tuple[Conflict, ...] = (
    Conflict(
        {"amp_dtype": True, "amp": False}, "--amp-dtype needs --amp", "--amp-dtype 需要 --amp"
    ),
    Conflict(
        {"model": "convnet", "activation_checkpointing": "selective"},
        "--activation-checkpointing selective needs --model gpt: the conv net's blocks have "
        "no matmuls to keep",
        "--activation-checkpointing selective 需要 --model gpt：卷积网络的块里没有可以保留的矩阵乘法结果",
    ),
    Conflict(
        {"ddp": True, "fsdp": True},
        "--ddp and --fsdp contradict each other: both spread training over processes, choose one",
        "--ddp 和 --fsdp 相互矛盾：两者都把训练分到多个进程上，只能选一个",
    ),
    Conflict(
        {"async_checkpoint": True, "fsdp": False},
        "--async-checkpoint needs --fsdp: it saves with torch.distributed.checkpoint",
        "--async-checkpoint 需要 --fsdp：它用 torch.distributed.checkpoint 保存",
    ),
    Conflict(
        {"fsdp_no_sync_accum": True, "fsdp": False},
        "--fsdp-no-sync-accum needs --fsdp: it skips FSDP's reduce-scatters",
        "--fsdp-no-sync-accum 需要 --fsdp：它跳过的是 FSDP 的 reduce-scatter",
    ),
    Conflict(
        {"fsdp_no_sync_accum": True, "fsdp": True, "accum": False},
        "--fsdp-no-sync-accum needs --accum N (N > 1): it skips reduce-scatters between "
        "micro-batches",
        "--fsdp-no-sync-accum 需要 --accum N（N > 1）：它跳过的是微批次之间的 reduce-scatter",
    ),
    Conflict(
        {"deterministic": True, "cudnn_benchmark": True},
        "--deterministic and --cudnn-benchmark contradict each other: benchmark mode picks "
        "convolution algorithms by timing them, so results vary between runs",
        "--deterministic 和 --cudnn-benchmark 相互矛盾：benchmark 模式靠计时挑选卷积算法，"
        "每次运行的结果因此不同",
    ),
    Conflict(
        {"device": "cpu", "amp_dtype": "fp16"},
        "--amp-dtype fp16 needs a CUDA target: with --device cpu use bf16 or auto",
        "--amp-dtype fp16 需要以 CUDA 为目标：用 --device cpu 时请选 bf16 或 auto",
    ),
    Conflict({"device": "cpu", "tf32": True}, "--tf32" + _ONLY_CUDA, "--tf32" + _ONLY_CUDA_ZH),
    Conflict(
        {"device": "cpu", "cudnn_benchmark": True},
        "--cudnn-benchmark" + _ONLY_CUDA,
        "--cudnn-benchmark" + _ONLY_CUDA_ZH,
    ),
)


#: The core features of each model: every pair of them is composed and trained by the tests.
#: The GPT's --compile is trained alone and with every other flag (each compiled variant
#: costs tens of CPU-seconds).
CORE_FEATURES: dict[str, tuple[str, ...]] = {
    "convnet": (
        "amp",
        "accum",
        "ddp",
        "compile",
        "channels-last",
        "activation-checkpointing",
        "clip-grad-norm",
    ),
    "gpt": ("fsdp", "accum", "activation-checkpointing", "ema"),
}
