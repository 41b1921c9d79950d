# Float8 training with torchao: convert the large linears, rowwise or tensorwise scaling, always compiled (after)
# Generated from tips/float8-training-torchao.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/float8-training-torchao/after.py
from collections import OrderedDict

import torch
from torch import nn
from torchao.float8 import Float8LinearConfig, convert_to_float8_training

device = "cuda"  # float8 Tensor Cores: compute capability 8.9+ (L40S, H100, H200, B200)
dim, hidden, vocab = 1024, 4096, 1000


def make_model():
    torch.manual_seed(0)
    layers = OrderedDict(
        w1=nn.Linear(dim, hidden, bias=False),
        act=nn.GELU(),
        w2=nn.Linear(hidden, dim, bias=False),
        output=nn.Linear(dim, vocab, bias=False),
    )
    # bf16 weights keep the example short; a long run keeps fp32 master weights for AdamW
    # (FSDP2's MixedPrecisionPolicy, as torchtitan does): updates below bf16's spacing are lost.
    return nn.Sequential(layers).to(device, torch.bfloat16)


def module_filter_fn(module, fqn):
    # Only the large matmuls of the blocks: not the output layer, and only sizes that are
    # multiples of 16 (a float8 matmul requirement).
    return fqn != "output" and module.in_features % 16 == 0 and module.out_features % 16 == 0


model = make_model()
config = Float8LinearConfig.from_recipe_name("rowwise")  # or "tensorwise": faster, FSDP2 float8 all-gather
convert_to_float8_training(model, config=config, module_filter_fn=module_filter_fn)
model.compile()  # fuses the amax, scale and cast kernels: without it float8 can lose to bf16
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

torch.manual_seed(1)
x = torch.randn(512, dim, device=device, dtype=torch.bfloat16)
target = torch.randint(0, vocab, (512,), device=device)
losses = []
for _ in range(20):
    loss = nn.functional.cross_entropy(model(x).float(), target)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    losses.append(loss.detach())
losses = torch.stack(losses).tolist()
print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")
