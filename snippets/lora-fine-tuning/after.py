# Fine-tune with LoRA: a frozen bf16 base, fp32 adapters, an adapter-only optimizer and checkpoint, then merge (after)
# Generated from tips/lora-fine-tuning.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/lora-fine-tuning/after.py
import math
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.utils.checkpoint import checkpoint

VOCAB, WIDTH = 64, 32


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(WIDTH)
        self.up, self.down = nn.Linear(WIDTH, 4 * WIDTH), nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(2))
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens):
        x = self.embed(tokens)  # frozen: no block input requires grad
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)  # the adapters inside still get gradients
        return self.head(x.flatten(0, 1))


def pretrained_weights():
    torch.manual_seed(0)  # stands in for the downloaded bf16 checkpoint
    return {k: v.to(torch.bfloat16) for k, v in Model().state_dict().items()}


class LoRALinear(nn.Module):
    """base(x) + (alpha / r) * B(A(x)): the base frozen, A and B trained in fp32."""

    def __init__(self, base, r=4, alpha=8):
        super().__init__()
        self.base = base.requires_grad_(False)
        self.lora_a = nn.Linear(base.in_features, r, bias=False, dtype=torch.float32)
        self.lora_b = nn.Linear(r, base.out_features, bias=False, dtype=torch.float32)
        nn.init.kaiming_uniform_(self.lora_a.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_b.weight)  # B = 0: training starts exactly at the base model
        self.scale = alpha / r

    def forward(self, x):
        delta = self.lora_b(self.lora_a(x.to(self.lora_a.weight.dtype)))
        return self.base(x) + self.scale * delta.to(x.dtype)


def add_lora(model):
    model.requires_grad_(False)
    for block in model.blocks:
        block.up, block.down = LoRALinear(block.up), LoRALinear(block.down)
    return model


@torch.no_grad()
def merge_lora(model):
    """Fold every adapter into its base weight (computed in fp32): plain nn.Linear layers again."""
    for block in model.blocks:
        for name in ("up", "down"):
            lora = getattr(block, name)
            delta = lora.scale * lora.lora_b.weight.float() @ lora.lora_a.weight.float()
            lora.base.weight.copy_(lora.base.weight.float() + delta)
            setattr(block, name, lora.base)
    return model


def batch(step, rank):
    g = torch.Generator().manual_seed(100 * step + rank)
    tokens = torch.randint(0, VOCAB, (4, 16), generator=g)
    return tokens, (tokens * 7 + 3) % VOCAB  # a task the base model does not know


# GPUs: torch.cuda.set_device(local_rank) and the backend "nccl"; one GPU: leave out the
# process group and the fully_shard calls.
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank = dist.get_rank()
model = Model()
model.load_state_dict(pretrained_weights())
model.requires_grad_(False)  # the frozen base, kept in bf16: 2 bytes a parameter,
model.to(torch.bfloat16)  # no gradients and no optimizer state
torch.manual_seed(1)  # the same adapters on every rank: fully_shard keeps each rank's own slice
add_lora(model)  # the adapters stay fp32: the only weights an optimizer updates

mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
for block in model.blocks:
    fully_shard(block, mp_policy=mp)  # base and adapters sharded alike; trainable ones all fp32
fully_shard(model, mp_policy=mp)

trainable = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.AdamW(trainable, lr=1e-2, weight_decay=0.0)  # state for the adapters only
for step in range(10):
    tokens, targets = batch(step, rank)
    F.cross_entropy(model(tokens).float(), targets.flatten()).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)

# Save the adapters only: frozen weights are dropped before the gather, rank 0 gets full tensors.
options = StateDictOptions(full_state_dict=True, cpu_offload=True, ignore_frozen_params=True)
adapters = get_model_state_dict(model, options=options)
if rank == 0:
    torch.save(adapters, "adapter.pt")  # kilobytes here, tens of MB for a 7B model
    # Export: a fresh copy of the base, the adapters on top, folded into plain weights.
    export = Model().to(torch.bfloat16)
    export.load_state_dict(pretrained_weights())
    missing, unexpected = add_lora(export).load_state_dict(
        torch.load("adapter.pt", weights_only=True), strict=False  # strict=False: base keys are absent
    )
    assert not unexpected and not any(".lora_" in k for k in missing)  # every adapter was loaded
    torch.save(merge_lora(export).state_dict(), "merged.pt")
dist.destroy_process_group()
