# For sequences too long for one GPU, shard the sequence with context parallel (`context_parallel`, ring attention), not by cutting it into independent chunks (before)
# Generated from tips/context-parallel-ring-attention.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/context-parallel-ring-attention/before.py
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

VOCAB, DIM, HEADS, SEQ = 64, 32, 2, 64
IGNORE = -100  # the label of padding: no loss, no gradient


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM, bias=False)
        self.proj = nn.Linear(DIM, DIM, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, -1).permute(2, 0, 3, 1, 4)  # (b, heads, t, d)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, -1))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, DIM), nn.Embedding(SEQ, DIM)
        self.norm, self.attn = nn.LayerNorm(DIM), Attention()
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens, positions):
        h = self.tok(tokens) + self.pos(positions)
        h = h + self.attn(self.norm(h))
        return self.head(h)


def make_model():
    torch.manual_seed(0)  # every rank starts from the same weights
    return Model()


def long_batch():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, VOCAB, (2, SEQ + 1), generator=g)
    inputs, labels = tokens[:, :-1].clone(), tokens[:, 1:].clone()  # separate tensors, not views
    labels[1, -20:] = IGNORE  # the second sequence is shorter: padding at its end
    return inputs, labels


local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
device = torch.device("cuda", local_rank)
mesh = init_device_mesh("cuda", (world,))
model = make_model().to(device)
fully_shard(model, mesh=mesh)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

tokens, labels = (t.to(device) for t in long_batch())
positions = torch.arange(SEQ, device=device)
# Each rank takes a contiguous piece of the sequence and runs the model on it.
piece = slice(rank * SEQ // world, (rank + 1) * SEQ // world)
tokens, labels, positions = tokens[:, piece], labels[:, piece], positions[piece]
optimizer.zero_grad()
loss = F.cross_entropy(model(tokens, positions).flatten(0, 1), labels.flatten())
loss.backward()
optimizer.step()
dist.destroy_process_group()
