# torch.compile with DDP and FSDP2: compile each block, let DDP split the graph at its buckets, give the compiled optimizer a tensor LR (before)
# Generated from tips/compile-distributed-ddp-fsdp2.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/compile-distributed-ddp-fsdp2/before.py
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

# Inductor on GPUs; this CPU demo uses aot_eager, which builds the same graphs.
BACKEND = "inductor" if torch.cuda.is_available() else "aot_eager"
VOCAB, WIDTH, DEPTH, STEPS = 64, 32, 2, 4


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width, bias=False)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width, bias=False),
            nn.GELU(),
            nn.Linear(4 * width, width, bias=False),
        )

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Model(nn.Module):
    def __init__(self, width=WIDTH, depth=DEPTH):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, VOCAB, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x.flatten(0, 1))


def build_model(mesh, depth=DEPTH):
    torch.manual_seed(0)
    model = Model(depth=depth)
    for block in model.blocks:
        block.compile(backend=BACKEND, fullgraph=True)
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def batch(step):
    g = torch.Generator().manual_seed(1000 * step + dist.get_rank())
    tokens = torch.randint(VOCAB, (4, 16), generator=g)
    return tokens, tokens.roll(-1, dims=1)


dist.init_process_group("gloo")  # GPUs: "nccl", and torch.cuda.set_device(local_rank)
mesh = init_device_mesh("cpu", (dist.get_world_size(),))
model = build_model(mesh)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)  # a float: a guarded constant
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / STEPS))


@torch.compile(backend=BACKEND)
def optimizer_step():
    optimizer.step()


for step in range(STEPS):
    tokens, targets = batch(step)
    nn.functional.cross_entropy(model(tokens), targets.flatten()).backward()
    optimizer_step()
    scheduler.step()  # a new float LR: the next optimizer_step recompiles
    optimizer.zero_grad(set_to_none=True)
dist.destroy_process_group()
