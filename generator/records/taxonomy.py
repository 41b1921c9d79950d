"""Fixed vocabularies of the tip records: categories, tags, impacts, devices, seeds, features.

Every list here is part of the record schema (they become enums in ``tips/schema.json``),
so adding a tag or a category is a one-line change in this file and nowhere else.
"""

from __future__ import annotations

from typing import NamedTuple


class Label(NamedTuple):
    """A bilingual display label."""

    en: str
    zh: str

    def get(self, lang: str) -> str:
        """The label in ``lang`` (``en`` or ``zh``)."""
        return self.zh if lang == "zh" else self.en


#: Categories, in navigation order, with their English and Chinese names.
CATEGORIES: dict[str, Label] = {
    "memory": Label("Memory", "显存与内存"),
    "speed-compute": Label("Speed: compute", "提速：计算"),
    "speed-data": Label("Speed: data loading", "提速：数据加载"),
    "mixed-precision": Label("Mixed precision", "混合精度"),
    "training-loop": Label("Training loop", "训练循环"),
    "models": Label("Models and autograd", "模型与自动求导"),
    "checkpoints": Label("Checkpoints", "检查点"),
    "distributed": Label("Distributed training", "分布式训练"),
    "debugging": Label("Debugging and profiling", "调试与性能分析"),
    "reproducibility": Label("Reproducibility", "可复现性"),
    "cpu-training": Label("CPU training", "CPU 训练"),
}

#: Tags a record may carry. Keep them short, lowercase and hyphenated.
TAGS: dict[str, Label] = {
    "activation-checkpointing": Label("activation checkpointing", "激活重计算"),
    "allocator": Label("memory allocator", "显存/内存分配器"),
    "amp": Label("AMP", "自动混合精度"),
    "attention": Label("attention", "注意力"),
    "augmentation": Label("data augmentation", "数据增强"),
    "autograd": Label("autograd", "自动求导"),
    "batch-size": Label("batch size", "批大小"),
    "batchnorm": Label("BatchNorm", "BatchNorm"),
    "benchmarking": Label("benchmarking", "基准测试"),
    "bf16": Label("bfloat16", "bfloat16"),
    "checkpoint": Label("checkpoint", "检查点"),
    "clipping": Label("gradient clipping", "梯度裁剪"),
    "compile": Label("torch.compile", "torch.compile"),
    "compile-cache": Label("compile cache", "编译缓存"),
    "context-parallel": Label("context parallel", "上下文并行"),
    "conv": Label("convolution", "卷积"),
    "cuda-graphs": Label("CUDA graphs", "CUDA Graph"),
    "cudnn": Label("cuDNN", "cuDNN"),
    "data-loading": Label("data loading", "数据加载"),
    "ddp": Label("DDP", "分布式数据并行"),
    "determinism": Label("determinism", "确定性"),
    "device": Label("device placement", "设备放置"),
    "device-mesh": Label("device mesh", "DeviceMesh"),
    "distributed-checkpoint": Label("distributed checkpoint", "分布式检查点"),
    "distributions": Label("probability distributions", "概率分布"),
    "dropout": Label("Dropout", "Dropout"),
    "ema": Label("weight averaging (EMA/SWA)", "权重平均（EMA/SWA）"),
    "eval": Label("evaluation", "评估"),
    "fine-tuning": Label("fine-tuning", "微调"),
    "fp16": Label("float16", "float16"),
    "fsdp": Label("FSDP", "FSDP"),
    "fusion": Label("kernel fusion", "算子融合"),
    "gc": Label("garbage collection", "垃圾回收"),
    "gradient-accumulation": Label("gradient accumulation", "梯度累积"),
    "gradients": Label("gradients", "梯度"),
    "hang": Label("hangs and timeouts", "卡死与超时"),
    "hooks": Label("hooks", "钩子"),
    "in-memory-data": Label("in-memory data", "内存中的数据集"),
    "in-place": Label("in-place ops", "原地操作"),
    "inference": Label("inference", "推理"),
    "initialization": Label("initialization", "初始化"),
    "logging": Label("logging", "日志"),
    "loss": Label("loss", "损失函数"),
    "memory-format": Label("memory format", "内存布局"),
    "memory-leak": Label("memory leak", "内存泄漏"),
    "metrics": Label("metrics", "评估指标"),
    "mfu": Label("MFU and FLOPs", "MFU 与 FLOPs"),
    "module": Label("nn.Module", "nn.Module"),
    "nccl": Label("NCCL", "NCCL"),
    "numa": Label("NUMA", "NUMA"),
    "numpy": Label("NumPy", "NumPy"),
    "offloading": Label("offloading", "卸载"),
    "oom": Label("out of memory", "显存不足"),
    "optimizer": Label("optimizer", "优化器"),
    "packing": Label("sequence packing", "序列打包"),
    "parameters": Label("parameters", "参数"),
    "pipeline-parallel": Label("pipeline parallel", "流水线并行"),
    "profiling": Label("profiling", "性能分析"),
    "recompilation": Label("recompilation", "重新编译"),
    "resume": Label("resume", "断点续训"),
    "sampler": Label("sampler", "采样器"),
    "scheduler": Label("learning-rate schedule", "学习率调度"),
    "security": Label("security", "安全"),
    "seeding": Label("seeding", "随机种子"),
    "serialization": Label("serialization", "序列化"),
    "storage": Label("storage", "存储"),
    "sync": Label("CPU-GPU sync", "CPU-GPU 同步"),
    "tensor-basics": Label("tensor basics", "张量基础"),
    "tensor-cores": Label("Tensor Cores", "Tensor Core"),
    "tensor-parallel": Label("tensor parallel", "张量并行"),
    "tf32": Label("TF32", "TF32"),
    "threads": Label("CPU threads", "CPU 线程"),
    "timing": Label("timing", "计时"),
    "variable-length": Label("variable-length inputs", "变长输入"),
    "weight-decay": Label("weight decay", "权重衰减"),
}

#: What a tip improves.
IMPACTS: dict[str, Label] = {
    "speed": Label("speed", "速度"),
    "memory": Label("memory", "显存/内存"),
    "correctness": Label("correctness", "正确性"),
    "security": Label("security", "安全"),
    "readability": Label("readability", "可读性"),
}

#: Where a tip applies and where the harness runs it.
DEVICES: dict[str, Label] = {
    "cpu": Label("CPU", "CPU"),
    "cuda": Label("CUDA GPU", "CUDA GPU"),
    "multi-gpu": Label("several GPUs", "多 GPU"),
}

#: The community articles the knowledge base started from (``shared/seeds/``), by prefix, as a
#: reader sees them cited: the article's public title, or a neutral description where it has
#: none. The notes' file names are internal and never shown.
SEEDS: dict[str, Label] = {
    "000": Label(
        "“PyTorch tips and tricks” (community documentation page)",
        "《PyTorch tips and tricks》（社区文档页面）",
    ),
    "001": Label(
        "“Tips, tricks and gotchas in PyTorch” (blog post, 2019)",
        "《Tips, tricks and gotchas in PyTorch》（博客文章，2019）",
    ),
    "002": Label(
        "A community collection of PyTorch cheat sheets and snippets",
        "社区整理的 PyTorch 速查表与代码片段合集",
    ),
    "003": Label(
        "“Deep Learning - Speedup Tricks” (blog post, 2022)",
        "《Deep Learning - Speedup Tricks》（博客文章，2022）",
    ),
    "004": Label(
        "“Pytorch技巧” (Chinese blog post)",
        "《Pytorch技巧》（中文博客文章）",
    ),
}

#: Composer features a tip can belong to, with the ``compose`` flags that apply it.
#: ``always`` marks practices every generated script follows without a flag; which option
#: applies which feature is defined with the options (``generator/compose/catalog.py``,
#: ``OPTIONS``; tests/compose/test_options.py holds the two sets equal).
COMPOSE_FEATURES: dict[str, str | None] = {
    "always": None,
    "gpt": "--model gpt",
    "amp": "--amp",
    "accum": "--accum 4",
    "ddp": "--ddp",
    "fsdp": "--model gpt --fsdp",
    "compile": "--compile",
    "compile-regional": "--model gpt --compile",
    "channels-last": "--channels-last",
    "activation-checkpointing": "--activation-checkpointing",
    "selective-checkpointing": "--model gpt --activation-checkpointing selective",
    "clip-grad-norm": "--clip-grad-norm 1.0",
    "lr-schedule": "--model gpt",
    "ema": "--model gpt --ema 0.999",
    "tf32": "--tf32",
    "cudnn-benchmark": "--cudnn-benchmark",
    "deterministic": "--deterministic",
    "seed": "--seed 0",
    "seed-loader": "--seed 0",
    "workers": "--workers 4",
    "fused-optimizer": "--fused-optimizer",
    "no-decay-norm-bias": "--no-decay-norm-bias",
    "profile": "--profile",
    "memory-stats": "--memory-stats",
    "eval-every": "--eval-every 100",
}
