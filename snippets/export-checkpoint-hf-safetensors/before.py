# Export a sharded model as Hugging Face safetensors with DCP's HuggingFaceStorageWriter, and load such weights straight into a meta-built FSDP2 model (before)
# Generated from tips/export-checkpoint-hf-safetensors.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/export-checkpoint-hf-safetensors/before.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    set_model_state_dict,
)
from torch.distributed.fsdp import fully_shard

VOCAB, DIM = 64, 16


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(DIM, 4 * DIM, bias=False), nn.Linear(4 * DIM, DIM, bias=False)

    def forward(self, h):
        return h + self.down(F.gelu(self.up(h)))


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed, self.mlp, self.norm = nn.Embedding(VOCAB, DIM), MLP(), nn.RMSNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        self.head.weight = self.embed.weight  # tied input and output embeddings

    def forward(self, ids):
        return self.head(self.norm(self.mlp(self.embed(ids))))


dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank = dist.get_rank()
torch.manual_seed(0)
model = TinyLM()
fully_shard(model.mlp)
fully_shard(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
ids = torch.randint(VOCAB, (4, 8), generator=torch.Generator().manual_seed(1))
for _ in range(2):
    F.cross_entropy(model(ids).flatten(0, 1), ids.flatten()).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)

# Export: gather everything on rank 0 and pickle it, in the training code's names and dtype.
full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
if rank == 0:
    torch.save(full, "model.pt")
dist.barrier()

# Import for a fine-tune: every rank loads the whole file, then keeps its shards.
fresh = TinyLM()
fully_shard(fresh.mlp)
fully_shard(fresh)
loaded = torch.load("model.pt", weights_only=True)
set_model_state_dict(fresh, loaded, options=StateDictOptions(full_state_dict=True))
dist.destroy_process_group()
