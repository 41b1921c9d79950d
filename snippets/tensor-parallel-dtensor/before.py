# Tensor-parallelise the blocks with `parallelize_module`, add sequence parallel and `loss_parallel`, and compose it with FSDP on a 2-D `("dp", "tp")` mesh (before)
# Generated from tips/tensor-parallel-dtensor.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/tensor-parallel-dtensor/before.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

VOCAB, DIM, HEADS = 64, 32, 4


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_dim = DIM // HEADS
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(DIM, DIM, bias=False) for _ in range(4))

    def forward(self, x):
        b, t, _ = x.shape
        # -1, not HEADS: under tensor parallelism each rank holds HEADS / tp heads.
        q, k, v = (w(x).view(b, t, -1, self.head_dim).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(out.transpose(1, 2).reshape(b, t, -1))


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, 4 * DIM, bias=False)
        self.w2 = nn.Linear(4 * DIM, DIM, bias=False)

    def forward(self, x):
        return self.w2(F.gelu(self.w1(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_norm, self.attention = nn.RMSNorm(DIM), Attention()
        self.ffn_norm, self.feed_forward = nn.RMSNorm(DIM), FeedForward()

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self, n_layers=2):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Block() for _ in range(n_layers))
        self.norm = nn.RMSNorm(DIM)
        self.output = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.output(self.norm(h))


def make_model():
    torch.manual_seed(0)  # every rank starts from the same weights
    return Transformer()


def global_batch():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, VOCAB, (4, 9), generator=g)
    return tokens[:, :-1], tokens[:, 1:]  # 4 sequences of 8 tokens


# GPUs: torch.cuda.set_device(local_rank), backend "nccl", init_device_mesh("cuda", ...).
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
mesh = init_device_mesh("cpu", (dist.get_world_size(),))
model = make_model()
parallelize_module(model, mesh, {"output": ColwiseParallel(output_layouts=Replicate())})
for block in model.layers:
    parallelize_module(block, mesh, {
        "attention.wq": ColwiseParallel(),
        "attention.wk": ColwiseParallel(),
        "attention.wv": ColwiseParallel(),
        "attention.wo": RowwiseParallel(),  # all-reduce: full activation on every rank
        "feed_forward.w1": ColwiseParallel(),
        "feed_forward.w2": RowwiseParallel(),
    })
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

inputs, labels = global_batch()  # every rank of the group sees the same batch
optimizer.zero_grad()
logits = model(inputs)  # all-gathered: the whole vocabulary on every rank
loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten())
loss.backward()
optimizer.step()
dist.destroy_process_group()
