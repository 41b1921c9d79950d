# Measure model FLOPs utilisation (MFU) of a training step with FlopCounterMode (after)
# Generated from tips/measure-mfu.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/measure-mfu/after.py
import re
import time

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

device = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if device == "cuda" else torch.float32

# Dense (no 2:4 sparsity) bf16 Tensor Core peak per GPU, from NVIDIA's datasheets. The first
# key found as a word of the device name wins: "H100 NVL" before "H100"; "NVIDIA GH200" is
# not an H200, nor "NVIDIA GB200" a B200.
PEAK_BF16_FLOPS = {
    "H100 PCIe": 756e12, "H100 NVL": 835e12, "H200 NVL": 835e12, "H100": 989e12,
    "H200": 989e12, "GB200": 2500e12, "B200": 2250e12, "A100": 312e12,
}


class Block(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        self.up = nn.Linear(d_model, 4 * d_model, bias=False)
        self.down = nn.Linear(4 * d_model, d_model, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(x)))


class TinyLM(nn.Module):
    def __init__(self, vocab, d_model, n_heads, n_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads) for _ in range(n_layers))
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx):
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


vocab, d_model, n_heads, n_layers, batch, seq_len = 256, 64, 4, 2, 4, 32
torch.manual_seed(0)
model = TinyLM(vocab, d_model, n_heads, n_layers).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
idx = torch.randint(0, vocab, (batch, seq_len), device=device)
targets = torch.randint(0, vocab, (batch, seq_len), device=device)
tokens = batch * seq_len


def train_step():
    with torch.autocast(device, dtype=dtype, enabled=device == "cuda"):
        logits = model(idx)
    loss = F.cross_entropy(logits.float().view(-1, vocab), targets.view(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


# Model FLOPs of one training step: forward AND backward, counted once. The math SDPA
# backend exposes attention's matmuls to the counter (fused kernels would also count
# FlashAttention's backward recomputation, i.e. hardware FLOPs).
with FlopCounterMode(display=False) as counter, sdpa_kernel(SDPBackend.MATH):
    train_step()
flops_per_step = counter.get_total_flops()


def seconds_per_step(steps=5):
    train_step()  # warm-up
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        train_step()
    if device == "cuda":
        torch.cuda.synchronize()  # wait for the GPU before reading the clock
    return (time.perf_counter() - start) / steps


def datasheet_peak(device_name):
    """The datasheet peak of a GPU by its name, or None for a GPU not in the table."""
    matches = (v for k, v in PEAK_BF16_FLOPS.items() if re.search(rf"\b{k}\b", device_name))
    return next(matches, None)


def peak_flops():
    if device == "cuda" and datasheet_peak(torch.cuda.get_device_name()):
        return datasheet_peak(torch.cuda.get_device_name())
    # Unknown hardware (or a CPU): the best rate a large matmul reaches here.
    a = torch.randn(1024, 1024, device=device, dtype=dtype)
    best = float("inf")
    for _ in range(5):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        a @ a
        if device == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return 2 * 1024**3 / best


def mfu(flops_per_step, seconds_per_step, peak_flops_per_second):
    """Model FLOPs utilisation: achieved model FLOP/s over the device's peak FLOP/s."""
    return flops_per_step / seconds_per_step / peak_flops_per_second


step_time = seconds_per_step()
utilisation = mfu(flops_per_step, step_time, peak_flops())
print(f"{flops_per_step / 1e6:.1f} MFLOP per step, {step_time * 1e3:.1f} ms, MFU {utilisation:.1%}")
