"""How fast `python -m generator lint` checks code: lines per second on one core.

Generates about 10,000 lines of realistic training code (an ImageNet-style loop, a
nanoGPT-style loop, a fine-tuning loop with accumulation and AMP, a DDP script, a model
file and an older script with stale APIs, each repeated with fresh names) into a temporary
folder, then times the whole lint of that folder in this process (read, parse, every rule,
noqa, sorting; no output written) a few times and prints the best run. The target of issue
11 is 10,000 lines in under 2 s on one core. This is a benchmark, not a test: run it by
hand.

    python benchmarks/lint_speed.py                # about 10,000 lines
    python benchmarks/lint_speed.py --lines 50000 --repeat 3
    python benchmarks/lint_speed.py --write DIR    # keep the generated files in DIR

The process pins itself to one CPU core where the platform allows it
(``os.sched_setaffinity``) and reports both wall time and CPU time: on a shared machine
other processes take turns on that core, and the CPU time is the one-core cost.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# --- realistic code, one template per style; {n} makes every copy's names unique ---------

IMAGENET = '''\
"""ImageNet-style classification training, copy {n}."""
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms as T
from torch.utils.data import DataLoader
from torchvision import datasets, models


def parse_args_{n}():
    parser = argparse.ArgumentParser(description="ImageNet training")
    parser.add_argument("data", metavar="DIR", help="path to dataset")
    parser.add_argument("--arch", default="resnet18")
    parser.add_argument("--epochs", default=90, type=int)
    parser.add_argument("--batch-size", default=256, type=int)
    parser.add_argument("--lr", default=0.1, type=float)
    parser.add_argument("--momentum", default=0.9, type=float)
    parser.add_argument("--wd", default=1e-4, type=float)
    parser.add_argument("--workers", default=8, type=int)
    parser.add_argument("--print-freq", default=10, type=int)
    return parser.parse_args()


class AverageMeter_{n}:
    """Computes and stores the average and current value."""

    def __init__(self, name, fmt=":f"):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy_{n}(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


def train_{n}(loader, model, criterion, optimizer, epoch, device, print_freq):
    batch_time = AverageMeter_{n}("Time", ":6.3f")
    losses = AverageMeter_{n}("Loss", ":.4e")
    top1 = AverageMeter_{n}("Acc@1", ":6.2f")
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        output = model(images)
        loss = criterion(output, target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if i % print_freq == 0:
            acc1, = accuracy_{n}(output, target, topk=(1,))
            losses.update(loss.item(), images.size(0))
            top1.update(acc1[0].item(), images.size(0))
            batch_time.update(time.time() - end)
            print(f"epoch {{epoch}} [{{i}}/{{len(loader)}}] loss {{losses.avg:.4f}} acc {{top1.avg:.2f}}")
        end = time.time()


def validate_{n}(loader, model, criterion, device):
    top1 = AverageMeter_{n}("Acc@1", ":6.2f")
    model.eval()
    with torch.inference_mode():
        for images, target in loader:
            images = images.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            output = model(images)
            acc1, = accuracy_{n}(output, target, topk=(1,))
            top1.update(acc1[0], images.size(0))
    model.train()
    return top1.avg


def main_{n}():
    args = parse_args_{n}()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = models.__dict__[args.arch]().to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(
        model.parameters(), args.lr, momentum=args.momentum, weight_decay=args.wd
    )
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    normalize = T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(
        os.path.join(args.data, "train"),
        T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(), normalize]),
    )
    train_loader = DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=True,
        num_workers=args.workers, pin_memory=True,
    )
    best_acc1 = 0.0
    for epoch in range(args.epochs):
        train_{n}(train_loader, model, criterion, optimizer, epoch, device, args.print_freq)
        acc1 = validate_{n}(train_loader, model, criterion, device)
        scheduler.step()
        if acc1 > best_acc1:
            best_acc1 = acc1
            torch.save({{"epoch": epoch + 1, "state_dict": model.state_dict()}}, "best_{n}.pth")


if __name__ == "__main__":
    main_{n}()
'''

GPT = '''\
"""A small GPT and its training loop, nanoGPT style, copy {n}."""
import math
import time
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F


@dataclass
class GPTConfig_{n}:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True


class CausalSelfAttention_{n}(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(
            q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=True
        )
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP_{n}(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block_{n}(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention_{n}(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP_{n}(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT_{n}(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block_{n}(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def get_lr_{n}(it, warmup_iters=2000, lr_decay_iters=600000, learning_rate=6e-4, min_lr=6e-5):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


def get_batch_{n}(data, block_size, batch_size, device):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)


def train_{n}(data, device="cuda", max_iters=600000, grad_accum=40, log_interval=10):
    ctx = nullcontext() if device == "cpu" else torch.amp.autocast(device_type=device, dtype=torch.bfloat16)
    model = GPT_{n}(GPTConfig_{n}()).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), fused=True)
    scaler = torch.amp.GradScaler(device, enabled=False)
    X, Y = get_batch_{n}(data, 1024, 12, device)
    t0 = time.time()
    for iter_num in range(max_iters):
        lr = get_lr_{n}(iter_num)
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr
        for micro_step in range(grad_accum):
            with ctx:
                logits, loss = model(X, Y)
                loss = loss / grad_accum
            X, Y = get_batch_{n}(data, 1024, 12, device)
            scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        if iter_num % log_interval == 0:
            lossf = loss.item() * grad_accum
            dt = time.time() - t0
            t0 = time.time()
            print(f"iter {{iter_num}}: loss {{lossf:.4f}}, time {{dt * 1000:.2f}}ms")
    return model
'''

FINETUNE = '''\
"""Fine-tuning a classifier with AMP and gradient accumulation, copy {n}."""
import json
import random

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


def seed_all_{n}(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class JsonlDataset_{n}(Dataset):
    def __init__(self, path, max_len=128):
        with open(path, encoding="utf-8") as f:
            self.rows = [json.loads(line) for line in f]
        self.max_len = max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        ids = row["input_ids"][: self.max_len]
        ids = ids + [0] * (self.max_len - len(ids))
        return torch.tensor(ids), torch.tensor(row["label"])


class Classifier_{n}(nn.Module):
    def __init__(self, vocab=30522, width=256, n_classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(width, 4, 4 * width, batch_first=True), num_layers=4
        )
        self.head = nn.Linear(width, n_classes)

    def forward(self, ids):
        h = self.encoder(self.embed(ids))
        return self.head(h.mean(dim=1))


def evaluate_{n}(model, loader, device):
    model.eval()
    correct = torch.zeros((), device=device)
    seen = 0
    with torch.inference_mode():
        for ids, labels in loader:
            ids, labels = ids.to(device), labels.to(device)
            correct += (model(ids).argmax(-1) == labels).sum()
            seen += labels.numel()
    model.train()
    return correct.item() / max(seen, 1)


def finetune_{n}(train_path, val_path, epochs=3, accum=4, lr=2e-5):
    seed_all_{n}(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = Classifier_{n}().to(device)
    train_loader = DataLoader(
        JsonlDataset_{n}(train_path), batch_size=16, shuffle=True, num_workers=4, pin_memory=True
    )
    val_loader = DataLoader(JsonlDataset_{n}(val_path), batch_size=64, num_workers=4, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, 1.0, 0.0, total_iters=epochs * len(train_loader) // accum)
    scaler = torch.amp.GradScaler(device, enabled=device == "cuda")
    for epoch in range(epochs):
        running = torch.zeros((), device=device)
        for step, (ids, labels) in enumerate(train_loader):
            ids, labels = ids.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            with torch.autocast(device, dtype=torch.float16, enabled=device == "cuda"):
                loss = nn.functional.cross_entropy(model(ids), labels) / accum
            scaler.scale(loss).backward()
            running += loss.detach()
            if (step + 1) % accum == 0:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
        acc = evaluate_{n}(model, val_loader, device)
        print(f"epoch {{epoch}}: train loss {{running.item() / len(train_loader):.4f}} val acc {{acc:.3f}}")
        torch.save(
            {{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}},
            f"checkpoint_{n}_{{epoch}}.pt",
        )
    state = torch.load(f"checkpoint_{n}_{{epochs - 1}}.pt", map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    return model
'''

DDP = '''\
"""Distributed data parallel training under torchrun, copy {n}."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def setup_{n}():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def build_model_{n}(width=1024):
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(64, width),
        nn.ReLU(),
        nn.Linear(width, 10),
    )


def main_{n}(epochs=10, batch_size=64):
    local_rank = setup_{n}()
    device = torch.device("cuda", local_rank)
    model = build_model_{n}().to(device)
    ddp_model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1, momentum=0.9)
    dataset = TensorDataset(torch.randn(4096, 3, 32, 32), torch.randint(0, 10, (4096,)))
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(
        dataset, batch_size=batch_size, sampler=sampler, num_workers=4, pin_memory=True
    )
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        total = torch.zeros((), device=device)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = nn.functional.cross_entropy(ddp_model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach()
        dist.all_reduce(total)
        if dist.get_rank() == 0:
            print(f"epoch {{epoch}}: loss {{total.item() / len(loader) / dist.get_world_size():.4f}}")
            torch.save(ddp_model.module.state_dict(), f"model_{n}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main_{n}()
'''

OLD = '''\
"""A 2019-style script: stale APIs and habits that the lint reports, copy {n}."""
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable


class Net_{n}(nn.Module):
    def __init__(self):
        super(Net_{n}, self).__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 32, 3), nn.BatchNorm2d(32), nn.ReLU())
        self.layers = [nn.Linear(32, 32) for _ in range(3)]
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.conv(x).mean(dim=(2, 3))
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.fc(x)


def train_{n}(images, labels, epochs=5):
    model = nn.DataParallel(Net_{n}()).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.cuda.amp.GradScaler()
    x_all = torch.tensor(np.asarray(images))
    losses = []
    for epoch in range(epochs):
        for i in range(0, len(x_all), 32):
            x = Variable(x_all[i:i + 32]).cuda()
            y = torch.tensor(labels[i:i + 32]).cuda()
            with torch.cuda.amp.autocast():
                loss = nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=False)
            losses.append(loss)
            print("loss", loss.item())
            torch.cuda.empty_cache()
    torch.save(model, "model_{n}.pth")
    return torch.load("model_{n}.pth")
'''

TEMPLATES = (IMAGENET, GPT, FINETUNE, DDP, OLD)


def generate(folder: Path, lines: int) -> tuple[int, int]:
    """Write copies of the templates into ``folder`` until about ``lines`` lines; return
    (files, lines written)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = files = 0
    n = 0
    while written < lines:
        for template in TEMPLATES:
            text = template.format(n=n)
            (folder / f"script_{n:04d}_{files % len(TEMPLATES)}.py").write_text(text, "utf-8")
            written += text.count("\n")
            files += 1
            if written >= lines:
                break
        n += 1
    return files, written


def pin_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        return f"pinned to core {core}"
    return "not pinned (no sched_setaffinity on this platform)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000, help="about this many lines")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs; the best counts")
    parser.add_argument("--write", metavar="DIR", help="generate into DIR and keep it")
    args = parser.parse_args()
    pinned = pin_one_core()

    start = time.perf_counter()
    from generator.lint import engine  # the import is part of a real run's start-up

    import_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory(prefix="lint-speed-") as tmp:
        folder = Path(args.write) if args.write else Path(tmp)
        files, lines = generate(folder, args.lines)
        times, cpu, findings = [], [], 0
        for _ in range(args.repeat):
            start, start_cpu = time.perf_counter(), time.process_time()
            result = engine.lint_paths([folder])
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            findings = len(result.findings)
            assert not result.errors, result.errors
    best, best_cpu = min(times), min(cpu)
    print(f"{files} files, {lines} lines, {findings} findings ({pinned})")
    print(f"import generator.lint: {import_s * 1e3:.0f} ms")
    print(
        f"lint: best {best:.3f} s wall, {best_cpu:.3f} s CPU; "
        f"median {sorted(times)[len(times) // 2]:.3f} s wall of {len(times)} runs"
    )
    print(
        f"{lines / best:,.0f} lines/s wall, {lines / best_cpu:,.0f} lines/s CPU; "
        f"10,000 lines in {10_000 * best / lines:.3f} s wall, {10_000 * best_cpu / lines:.3f} s CPU"
    )
    print("(on a shared machine, CPU time is the one-core figure; wall time includes waiting)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
