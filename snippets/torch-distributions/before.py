# Use torch.distributions instead of hand-written probability maths (before)
# Generated from tips/torch-distributions.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/torch-distributions/before.py
import torch
from torch import nn

torch.manual_seed(0)
policy = nn.Linear(4, 3)
logits = policy(torch.randn(5, 4))


# Hand-rolled categorical maths, going through probabilities.
def log_prob_of(logits, actions):
    probs = torch.softmax(logits, dim=-1)
    return torch.log(probs).gather(-1, actions[..., None]).squeeze(-1)


def entropy_of(logits):
    probs = torch.softmax(logits, dim=-1)
    return -(probs * torch.log(probs)).sum(-1)


actions = torch.multinomial(torch.softmax(logits, dim=-1), num_samples=1).squeeze(1)
log_prob = log_prob_of(logits, actions)
entropy = entropy_of(logits)
