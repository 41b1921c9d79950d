# For sequences too long for one GPU, shard the sequence with context parallel (`context_parallel`, ring attention), not by cutting it into independent chunks (after)
# Generated from tips/context-parallel-ring-attention.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/context-parallel-ring-attention/after.py
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.experimental import context_parallel

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
        # Called through F: inside context_parallel this is ring attention (sequence on dim 2).
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
device = torch.device("cuda", local_rank)
cp_mesh = init_device_mesh("cuda", (dist.get_world_size(),), mesh_dim_names=("cp",))
model = make_model().to(device)
fully_shard(model, mesh=cp_mesh)  # replicated over CP ranks: FSDP averages their gradients
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

tokens, labels = (t.to(device) for t in long_batch())  # the same sequences on every CP rank
positions = torch.arange(SEQ, device=device)
# The valid tokens of the whole batch, counted before sharding (with data parallelism as well,
# all-reduce this count over the DP ranks).
n_valid = (labels != IGNORE).sum()
optimizer.zero_grad()
with context_parallel(
    cp_mesh,
    buffers=[tokens, labels, positions],  # sharded in place along the sequence
    buffer_seq_dims=[1, 1, 0],
    no_restore_buffers={tokens, labels},
):
    logits = model(tokens, positions)
    # This rank's sum over its tokens / the batch's valid tokens: the ranks hold different
    # numbers of valid tokens, so a mean per rank would weigh them unequally. FSDP averages
    # the gradients over the CP ranks, hence the factor cp_mesh.size().
    token_losses = F.cross_entropy(
        logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE, reduction="sum"
    )
    loss = token_losses * cp_mesh.size() / n_valid
    loss.backward()  # the backward runs inside the context too
optimizer.step()
dist.destroy_process_group()
