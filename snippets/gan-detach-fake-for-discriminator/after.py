# Detach the generator's output in the discriminator's step (after)
# Generated from tips/gan-detach-fake-for-discriminator.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/gan-detach-fake-for-discriminator/after.py
import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 16))  # generator
D = nn.Sequential(nn.Linear(16, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))  # discriminator
opt_G = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_D = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()
real, z = torch.randn(64, 16), torch.randn(64, 8)
ones, zeros = torch.ones(64, 1), torch.zeros(64, 1)

fake = G(z)
# Discriminator step: the backward pass stops at the detached fake batch.
d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
opt_D.zero_grad()
d_loss.backward()
opt_D.step()
# Generator step: the undetached fake lets the gradient flow through D into G.
g_loss = bce(D(fake), ones)
opt_G.zero_grad()
g_loss.backward()
opt_G.step()
