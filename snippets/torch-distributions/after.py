# Use torch.distributions instead of hand-written probability maths (after)
# Generated from tips/torch-distributions.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/torch-distributions/after.py
import torch
from torch import nn
from torch.distributions import Categorical, kl_divergence


def action_distribution(logits):
    # Pass logits= by keyword: the first positional argument of Categorical is probs.
    return Categorical(logits=logits)


torch.manual_seed(0)
policy = nn.Linear(4, 3)
logits = policy(torch.randn(5, 4))
dist = action_distribution(logits)  # a batch of 5 distributions over 3 classes
actions = dist.sample()  # shape (5,), integer classes, no gradient
log_prob = dist.log_prob(actions)  # computed from log_softmax: stays finite
entropy = dist.entropy()

# REINFORCE-style loss: the gradient reaches the policy through log_prob.
advantages = torch.randn(5)
loss = -(log_prob * advantages).mean()
loss.backward()

# KL divergence to a uniform reference, one value per distribution in the batch.
uniform = action_distribution(torch.zeros(5, 3))
kl = kl_divergence(dist, uniform)
