# RL post-training (PPO/GRPO): recompute the old log-probs with the trainer, sync the weights to the sampler every step, keep the reference frozen (after)
# Generated from tips/rl-post-training-grpo.yaml by `python -m generator snippets`; do not edit by hand.
# Run: python snippets/rl-post-training-grpo/after.py
import copy

import torch
from torch import nn

VOCAB, LENGTH, PROMPTS, GROUP, CLIP, BETA, STEPS = 16, 8, 8, 8, 0.2, 0.02, 20


class Policy(nn.Module):
    """A bigram language model: next-token logits from the previous token."""

    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(VOCAB, VOCAB)

    def forward(self, tokens):
        return self.table(tokens)


def reward(seqs):
    return (seqs[:, 1:] == 0).float().mean(1)  # a verifiable reward: the share of 0 tokens


@torch.no_grad()  # not inference_mode: the trainer's forward on these tokens needs autograd
def generate(engine, prompts, gen):
    """The sampler: token by token, returning the tokens and its own log-probs."""
    seqs, logps = prompts[:, None], []
    for _ in range(LENGTH):
        logits = engine(seqs[:, -1:]).float()[:, -1]
        token = torch.multinomial(logits.softmax(-1), 1, generator=gen)
        logps.append(logits.log_softmax(-1).gather(1, token))
        seqs = torch.cat([seqs, token], 1)
    return seqs, torch.cat(logps, 1)


def token_logprobs(model, seqs):
    return model(seqs[:, :-1]).float().log_softmax(-1).gather(2, seqs[:, 1:, None]).squeeze(2)


def grpo_loss(policy, reference, seqs, old_logp, advantages):
    logp = token_logprobs(policy, seqs)
    ratio = (logp - old_logp).exp()
    a = advantages[:, None]
    surrogate = -torch.min(ratio * a, ratio.clamp(1 - CLIP, 1 + CLIP) * a)
    with torch.no_grad():
        ref_logp = token_logprobs(reference, seqs)
    kl = (ref_logp - logp).exp() - (ref_logp - logp) - 1  # k3 estimator of KL(policy || reference)
    return (surrogate + BETA * kl).mean(), ratio.detach()


torch.manual_seed(0)
policy = Policy()
reference = copy.deepcopy(policy).requires_grad_(False)  # frozen: no gradients, no optimizer state
engine = copy.deepcopy(policy).to(torch.bfloat16).requires_grad_(False)  # the inference engine
optimizer = torch.optim.AdamW(policy.parameters(), lr=0.05)  # the policy's parameters only
gen = torch.Generator().manual_seed(1)
rewards, drift = [], []  # drift: max |ratio - 1| at each batch's first update (0 on-policy)
for _ in range(STEPS):
    prompts = torch.randint(VOCAB, (PROMPTS,), generator=gen).repeat_interleave(GROUP)
    seqs, engine_logp = generate(engine, prompts, gen)
    r = reward(seqs).view(PROMPTS, GROUP)
    rewards.append(r.mean().item())
    advantages = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)).flatten()
    with torch.no_grad():
        old_logp = token_logprobs(policy, seqs)  # the trainer's numbers: ratio 1 on-policy
    for epoch in range(2):  # two PPO epochs over the batch
        loss, ratio = grpo_loss(policy, reference, seqs, old_logp, advantages)
        if epoch == 0:
            drift.append((ratio - 1).abs().max().item())  # worth logging: 0 when on-policy
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    engine.load_state_dict(policy.state_dict())  # weight sync: copies in place, casts to bf16
print("reward per step:", " ".join(f"{x:.2f}" for x in rewards))
