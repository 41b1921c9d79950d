# Gather features for a cross-rank contrastive loss with a differentiable all-gather, not `dist.all_gather` (before)
# Generated from tips/differentiable-all-gather.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/differentiable-all-gather/before.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class DualEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.image, self.text = nn.Linear(16, 8), nn.Linear(12, 8)

    def forward(self, images, texts):
        return F.normalize(self.image(images), dim=-1), F.normalize(self.text(texts), dim=-1)


def gather(x, rank, world):
    parts = [torch.empty_like(x) for _ in range(world)]
    dist.all_gather(parts, x)  # no autograd: the other ranks' rows arrive as constants
    parts[rank] = x  # the usual patch: my own rows keep their graph
    return torch.cat(parts)


def clip_loss(img, txt, rank, temperature=0.1):
    """Symmetric InfoNCE: this rank's pairs against the negatives of every rank."""
    world = dist.get_world_size()
    all_img, all_txt = gather(img, rank, world), gather(txt, rank, world)
    labels = torch.arange(len(img)) + rank * len(img)  # my pairs sit at my offset in the gather
    loss_img = F.cross_entropy(img @ all_txt.T / temperature, labels)
    loss_txt = F.cross_entropy(txt @ all_img.T / temperature, labels)
    return (loss_img + loss_txt) / 2


def global_batch(step):
    g = torch.Generator().manual_seed(step)
    return torch.randn(16, 16, generator=g), torch.randn(16, 12, generator=g)


dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = DDP(DualEncoder())
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
for step in range(5):
    images, texts = global_batch(step)
    images, texts = images.chunk(world)[rank], texts.chunk(world)[rank]
    loss = clip_loss(*model(images, texts), rank)
    loss.backward()  # trains, and the loss goes down, with the wrong gradient
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
dist.destroy_process_group()
