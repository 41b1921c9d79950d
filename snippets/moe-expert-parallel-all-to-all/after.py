# Expert parallelism for MoE: split the experts over ranks and route tokens with a differentiable all-to-all (after)
# Generated from tips/moe-expert-parallel-all-to-all.yaml by `python -m generator snippets`; do not edit by hand.
# Every rank runs this script. Run: torchrun --standalone --nproc_per_node 2 snippets/moe-expert-parallel-all-to-all/after.py
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.nn.functional as F
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

DIM, HIDDEN, EXPERTS, TOP_K = 16, 32, 4, 2
EP = 2  # expert-parallel degree: each rank holds EXPERTS // EP experts
ALIGN = 8  # rows per expert group, a multiple of 8 (16-byte groups for the CUDA grouped GEMM in bf16)


class Experts(nn.Module):
    """This rank's experts, run on rows grouped by local expert."""

    def __init__(self, w_in, w_out):
        super().__init__()
        self.w_in, self.w_out = nn.Parameter(w_in), nn.Parameter(w_out)

    def forward(self, rows, offsets):
        return F.grouped_mm(F.gelu(F.grouped_mm(rows, self.w_in, offs=offsets)), self.w_out, offs=offsets)


class ExpertParallelMoE(nn.Module):
    def __init__(self, ep_group):
        super().__init__()
        torch.manual_seed(0)  # the same router and experts on every rank; each keeps its own experts
        self.router = nn.Linear(DIM, EXPERTS, bias=False)
        w_in = torch.randn(EXPERTS, DIM, HIDDEN) / DIM**0.5
        w_out = torch.randn(EXPERTS, HIDDEN, DIM) / HIDDEN**0.5
        self.group, self.ep, me = ep_group, dist.get_world_size(ep_group), dist.get_rank(ep_group)
        mine = slice(me * EXPERTS // self.ep, (me + 1) * EXPERTS // self.ep)  # contiguous expert ids
        self.experts = Experts(w_in[mine].clone(), w_out[mine].clone())

    def forward(self, x):
        weights, chosen = self.router(x).softmax(dim=-1).topk(TOP_K, dim=-1)
        chosen = chosen.flatten()
        order = chosen.argsort(stable=True)  # rows sorted by expert, hence by owning rank
        counts = torch.zeros(EXPERTS, dtype=torch.int64).scatter_add_(0, chosen, torch.ones_like(chosen))
        # 1. Counts: how many rows of each of my experts every rank will send me.
        recv_counts = funcol.all_to_all_single(counts, None, None, self.group).view(self.ep, -1)
        send_splits = counts.view(self.ep, -1).sum(1).tolist()  # Python ints: one host sync
        recv_splits = recv_counts.sum(1).tolist()
        # 2. Dispatch: a differentiable all-to-all with uneven splits.
        received = funcol.all_to_all_single(x[order // TOP_K], recv_splits, send_splits, self.group)
        # 3. Rows arrive as (source rank, local expert): regroup by local expert, pad each
        #    group to a multiple of ALIGN rows, run the local experts in one grouped matmul.
        expert = torch.arange(recv_counts.shape[1]).repeat(self.ep).repeat_interleave(recv_counts.flatten())
        regroup = expert.argsort(stable=True)
        rows, padded = recv_counts.sum(0), (recv_counts.sum(0) + ALIGN - 1) // ALIGN * ALIGN
        slot = (padded.cumsum(0) - padded - rows.cumsum(0) + rows)[expert[regroup]] + torch.arange(len(regroup))
        grouped = received.new_zeros(int(padded.sum()), DIM).index_copy(0, slot, received[regroup])
        out = self.experts(grouped, padded.cumsum(0).to(torch.int32))[slot]
        out = torch.empty_like(out).index_copy(0, regroup, out)  # back to (source rank, expert)
        # 4. Combine: the same all-to-all with the splits swapped, then weight and sum the k rows.
        back = funcol.all_to_all_single(out, send_splits, recv_splits, self.group)
        return torch.zeros_like(x).index_add(0, order // TOP_K, back * weights.flatten()[order, None])


def global_batch(step):
    g = torch.Generator().manual_seed(step)
    return torch.randn(32, DIM, generator=g), torch.randn(32, DIM, generator=g)


# GPUs: torch.cuda.set_device(local_rank), backend "nccl", meshes on "cuda", bf16 experts.
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
dense_mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("dp",))
moe_mesh = init_device_mesh("cpu", (world // EP, EP), mesh_dim_names=("dp_mod_ep", "ep"))
moe = ExpertParallelMoE(moe_mesh.get_group("ep"))
fully_shard(moe.experts, mesh=moe_mesh["dp_mod_ep"])  # experts: FSDP over the dp / ep ranks only
moe.experts.set_gradient_divide_factor(world)  # ...but averaged over every data-parallel rank
fully_shard(moe, mesh=dense_mesh)  # router (and attention, in a model): FSDP over all ranks
optimizer = torch.optim.AdamW(moe.parameters(), lr=1e-3)
for step in range(3):
    x, y = global_batch(step)
    x, y = x.chunk(world)[rank], y.chunk(world)[rank]
    F.mse_loss(moe(x), y).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
dist.destroy_process_group()
