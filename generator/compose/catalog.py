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
        features=(Feature("gpt", {"model": "gpt"}),),
    ),
    _flag(
        "amp",
        "Mixed precision: `torch.amp.autocast` around the forward pass and the loss only, not "
        "`backward()`; a `GradScaler` only where fp16 can be chosen. Under `--fsdp`, FSDP's "
        "`MixedPrecisionPolicy` instead: bf16 compute, fp32 gradient reduction.",
        "混合精度：`torch.amp.autocast` 只包住前向传播和损失计算，不包 `backward()`；只有可能用到 fp16 时"
        "才创建 `GradScaler`。使用 `--fsdp` 时改用 FSDP 的 `MixedPrecisionPolicy`：bf16 计算，fp32 归约梯度。",
    ),
    Option(
        "amp_dtype",
        "choice",
        None,
        {
            "en": "The autocast dtype of `--amp`: `auto` picks bf16 where the hardware has it "
            "(CPU, CUDA compute capability 8.0 and later) and fp16 with a `GradScaler` elsewhere. "
            "The GPT script trains in bf16.",
            "zh": "`--amp` 的 autocast 数据类型：`auto` 在硬件支持时（CPU，或计算能力 8.0 及以上的 CUDA GPU）"
            "用 bf16，否则用 fp16 加 `GradScaler`。GPT 脚本用 bf16 训练。",
        },
        choices=("auto", "bf16", "fp16"),
        features=(),
    ),
    _value(
        "accum",
        "int",
        1,
        "Gradient accumulation over N micro-batches per optimizer step, so the step's "
        "gradient is that of the mean over all its samples (GPT: over all its tokens). Under "
        "`--ddp` the N−1 other micro-batches run under `no_sync()`, forward pass included; "
        "under `--fsdp` they skip the reduce-scatter.",
        "梯度累积：每次优化器更新累积 N 个微批次，这一步的梯度就是全部样本（GPT 为全部 token）平均损失的梯度。"
        "使用 `--ddp` 时，前 N−1 个微批次放在 `no_sync()` 里执行，连前向传播一起包住；使用 `--fsdp` 时，"
        "它们跳过 reduce-scatter。",
        metavar="N",
        minimum=1,
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
        "covers all shards. The GPT script logs the norm.",
        "用 `clip_grad_norm_` 裁剪全局梯度范数；用到 GradScaler 时先调用 `scaler.unscale_()`；使用 `--fsdp` "
        "时直接作用于分片的梯度（DTensor），范数覆盖所有分片。GPT 脚本会记录这个范数。",
        metavar="X",
        exclusive_minimum=0,
    ),
    _value(
        "lr_schedule",
        "choice",
        None,
        "A linear warm-up, then a cosine decay to a tenth of the learning rate "
        "(`LambdaLR`), stepped after `optimizer.step()` once per optimizer step, created "
        "before the optimizer state is loaded and saved with the checkpoint.",
        "先线性预热，再按余弦曲线把学习率降到十分之一（`LambdaLR`）；每次优化器更新调用一次"
        "（放在 `optimizer.step()` 之后）；在加载优化器状态之前创建，并随训练检查点保存。",
        choices=("cosine",),
        models=_GPT,
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
        "TF32 tensor cores for fp32 matmuls (and the conv net's convolutions) on CUDA.",
        "CUDA 上的 fp32 矩阵乘法（以及卷积网络的卷积）使用 TF32 Tensor Core。",
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
        "datasets that decode or augment each sample (see [below](#script)).",
        "N 个常驻的 DataLoader worker，CUDA 上启用 `pin_memory` 和 `non_blocking` 拷贝：适用于需要对"
        "每个样本解码或增强的数据集（见[下文](#script)）。",
        metavar="N",
        minimum=0,
        models=_CONVNET,
    ),
    _flag(
        "fused_optimizer",
        "`AdamW(fused=True)`: one kernel for the whole update.",
        "`AdamW(fused=True)`：一个 kernel 完成全部参数的更新。",
    ),
    _flag(
        "no_decay_norm_bias",
        "Two parameter groups: no weight decay on biases and norm parameters.",
        "两个参数组：偏置和归一化层参数不做权重衰减。",
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
        "Evaluation every N steps under `model.eval()` and `torch.inference_mode()`: accuracy "
        "(conv net) or the held-out loss (GPT), summed on the device.",
        "每 N 步在 `model.eval()` 和 `torch.inference_mode()` 下评估一次：准确率（卷积网络）或留出数据上的"
        "损失（GPT），在设备上累加。",
        metavar="N",
        minimum=1,
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

#: Choices the composer refuses together, checked in this order after the ranges; an option
#: with a model outside its `Option.models` is refused first (`model_conflicts`).
CONFLICTS: tuple[Conflict, ...] = (
    Conflict({"amp_dtype": True, "amp": False}, "--amp-dtype needs --amp"),
    Conflict(
        {"model": "gpt", "amp_dtype": "fp16"},
        "--amp-dtype fp16 applies to --model convnet: the GPT script trains in bf16",
    ),
    Conflict(
        {"model": "convnet", "activation_checkpointing": "selective"},
        "--activation-checkpointing selective needs --model gpt: the conv net's blocks have "
        "no matmuls to keep",
    ),
    Conflict(
        {"ddp": True, "fsdp": True},
        "--ddp and --fsdp contradict each other: both spread training over processes, choose one",
    ),
    Conflict(
        {"async_checkpoint": True, "fsdp": False},
        "--async-checkpoint needs --fsdp: it saves with torch.distributed.checkpoint",
    ),
    Conflict(
        {"deterministic": True, "cudnn_benchmark": True},
        "--deterministic and --cudnn-benchmark contradict each other: benchmark mode picks "
        "convolution algorithms by timing them, so results vary between runs",
    ),
    Conflict(
        {"device": "cpu", "amp_dtype": "fp16"},
        "--amp-dtype fp16 needs a CUDA target: with --device cpu use bf16 or auto",
    ),
    Conflict({"device": "cpu", "tf32": True}, "--tf32" + _ONLY_CUDA),
    Conflict({"device": "cpu", "cudnn_benchmark": True}, "--cudnn-benchmark" + _ONLY_CUDA),
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
    "gpt": ("fsdp", "amp", "accum", "activation-checkpointing", "clip-grad-norm"),
}
