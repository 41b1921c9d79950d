# Gather features for a cross-rank contrastive loss with a differentiable all-gather, not `dist.all_gather` (after)
# Generated from tips/differentiable-all-gather.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/differentiable-all-gather/after.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class DualEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.image, self.text = nn.Linear(16, 8), nn.Linear(12, 8)

    def forward(self, images, texts):
        return F.normalize(self.image(images), dim=-1), F.normalize(self.text(texts), dim=-1)


def clip_loss(img, txt, rank, temperature=0.1):
    """Symmetric InfoNCE: this rank's pairs against the negatives of every rank."""
    all_img = funcol.all_gather_single(img, 0, dist.group.WORLD)  # differentiable: its backward
    all_txt = funcol.all_gather_single(txt, 0, dist.group.WORLD)  # sends gradients back to each rank
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
    loss.backward()  # DDP averages over ranks: the gradient of the global batch's loss
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
dist.destroy_process_group()
