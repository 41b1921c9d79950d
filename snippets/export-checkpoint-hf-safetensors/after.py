# Export a sharded model as Hugging Face safetensors with DCP's HuggingFaceStorageWriter, and load such weights straight into a meta-built FSDP2 model (after)
# Generated from tips/export-checkpoint-hf-safetensors.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/export-checkpoint-hf-safetensors/after.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn.functional as F
from torch import nn
from torch.distributed.checkpoint import HuggingFaceStorageReader, HuggingFaceStorageWriter
from torch.distributed.checkpoint.state_dict import get_model_state_dict, set_model_state_dict
from torch.distributed.fsdp import fully_shard

VOCAB, DIM = 64, 16
# Training names -> the Hugging Face names of the target architecture (here Llama-style).
TO_HF = {
    "embed.weight": "model.embed_tokens.weight",
    "mlp.up.weight": "model.layers.0.mlp.up_proj.weight",
    "mlp.down.weight": "model.layers.0.mlp.down_proj.weight",
    "norm.weight": "model.norm.weight",
}  # head.weight is tied to embed.weight: HF stores it once (tie_word_embeddings=True)


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


def shard(model):
    fully_shard(model.mlp)
    fully_shard(model)  # embed and head (one tied parameter) in the root group
    return model


def export_hf(model, path, dtype=torch.bfloat16):
    """Each rank writes its shards; rank 0 consolidates them into HF safetensors."""
    state = get_model_state_dict(model)  # sharded DTensors, nothing gathered
    hf = {TO_HF[k]: v.to(dtype) for k, v in state.items() if k in TO_HF}  # drops the tied head
    writer = HuggingFaceStorageWriter(path, save_distributed=True, enable_consolidation=True)
    dcp.save(hf, storage_writer=writer)


def load_hf(model, path):
    """Read each rank's slices of an HF checkpoint into a sharded model."""
    state = get_model_state_dict(model)
    hf = {TO_HF[k]: v for k, v in state.items() if k in TO_HF}
    dcp.load(hf, storage_reader=HuggingFaceStorageReader(path))  # in place, cast to each dtype
    state.update({k: hf[TO_HF[k]] for k in TO_HF})
    state["head.weight"] = state["embed.weight"]  # the tied head: the same tensor
    set_model_state_dict(model, state)


dist.init_process_group("gloo", timeout=timedelta(seconds=60))
torch.manual_seed(0)
model = shard(TinyLM())
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)  # fp32 master weights
ids = torch.randint(VOCAB, (4, 8), generator=torch.Generator().manual_seed(1))
for _ in range(2):
    F.cross_entropy(model(ids).flatten(0, 1), ids.flatten()).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
export_hf(model, "release")  # release/model-00001-of-00001.safetensors + index.json

# Fine-tune from HF weights: build on meta, shard, allocate the shards only, then load.
with torch.device("meta"):
    fresh = TinyLM()
shard(fresh).to_empty(device="cpu")
load_hf(fresh, "release")
dist.destroy_process_group()
