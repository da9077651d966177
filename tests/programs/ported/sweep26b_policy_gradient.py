"""REINFORCE with a baseline on a tiny hand-written environment: a discrete policy
(Categorical over logits) for a gridworld-like chain and a squashed Gaussian policy
(Normal + TanhTransform, Independent over action dims) for a 2-D reach task; actions drawn
with a dedicated torch.Generator so the environment's randomness and the policy's stay
separate, discounted returns by a reversed cumulative sum, entropy bonus, gradient clipping,
and the distribution objects' reprs, shapes and validation errors as a user meets them."""
import torch
import torch.nn as nn
from torch.distributions import (Categorical, Independent, Normal, TransformedDistribution,
                                 kl_divergence)
from torch.distributions.transforms import TanhTransform

torch.manual_seed(0)
env_gen = torch.Generator().manual_seed(123)
act_gen = torch.Generator().manual_seed(7)
gamma = 0.9


def discounted(rewards):
    # returns[t] = sum_k gamma^k r[t+k], computed by a flipped cumulative sum of scaled rewards
    T = rewards.shape[0]
    scale = gamma ** torch.arange(T, dtype=torch.float32)
    rev = torch.flip(rewards * scale, dims=[0]).cumsum(0)
    return torch.flip(rev, dims=[0]) / scale


print("returns", [round(v, 4) for v in discounted(torch.tensor([0.0, 0.0, 1.0, 0.0, 2.0])).tolist()])

# ---- discrete chain: 5 states, move left/stay/right, reward at the right end
n_states, n_actions = 5, 3
policy = nn.Sequential(nn.Embedding(n_states, 16), nn.Tanh(), nn.Linear(16, n_actions))
opt = torch.optim.Adam(policy.parameters(), lr=0.05)
for episode in range(3):
    state = torch.tensor(0)
    logps, ents, rewards = [], [], []
    for t in range(4):
        dist = Categorical(logits=policy(state))
        u = torch.rand((), generator=act_gen)
        # inverse-CDF sampling with our own generator
        action = (dist.probs.cumsum(-1) < u).sum().clamp(max=n_actions - 1)
        logps.append(dist.log_prob(action))
        ents.append(dist.entropy())
        state = (state + action - 1).clamp(0, n_states - 1)
        noise = 0.1 * torch.randn((), generator=env_gen)
        rewards.append((state == n_states - 1).float() + noise)
    R = discounted(torch.stack(rewards))
    adv = (R - R.mean()) / (R.std() + 1e-8)
    loss = -(torch.stack(logps) * adv).sum() - 0.01 * torch.stack(ents).sum()
    opt.zero_grad()
    loss.backward()
    gn = nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
    opt.step()
    print(f"ep {episode} return {R[0].item():.4f} loss {loss.item():.4f} "
          f"grad_norm {gn.item():.4f} final_state {state.item()}")

dist = Categorical(logits=policy(torch.arange(n_states)))
print(dist)
print("batch", dist.batch_shape, "event", dist.event_shape, "support", dist.support)
print("probs rows sum", [round(v, 5) for v in dist.probs.sum(-1).tolist()])
print("logits normalised", torch.allclose(dist.logits.logsumexp(-1), torch.zeros(n_states), atol=1e-6))
print("entropy", dist.entropy().shape, dist.entropy().grad_fn.name())
print("enumerate", dist.enumerate_support().shape, dist.enumerate_support(expand=False).shape)
print("log_prob bcast", dist.log_prob(torch.tensor([[0], [2]])).shape)
torch.manual_seed(3)
print("sample", dist.sample().tolist(), dist.sample((2,)).shape)
uniform = Categorical(probs=torch.ones(n_actions))
print("kl to uniform", [round(v, 5) for v in kl_divergence(dist, uniform).tolist()])
counts = torch.multinomial(dist.probs[0], 200, replacement=True,
                           generator=torch.Generator().manual_seed(1)).bincount(minlength=3)
print("multinomial counts", counts.tolist())

# ---- continuous reach: policy outputs mean and log-std, actions squashed to (-1, 1)
class Gaussian(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(2, 2)
        self.log_std = nn.Parameter(torch.full((2,), -0.5))

    def forward(self, obs):
        base = Normal(self.mu(obs), self.log_std.exp().expand(obs.shape[0], 2))
        return TransformedDistribution(Independent(base, 1), [TanhTransform(cache_size=1)])


pi = Gaussian()
opt = torch.optim.SGD(pi.parameters(), lr=0.1)
target = torch.tensor([0.5, -0.3])
for it in range(2):
    obs = torch.randn(8, 2, generator=env_gen)
    d = pi(obs)
    a = d.rsample()
    logp = d.log_prob(a)
    reward = -((a - target) ** 2).sum(-1)
    loss = -(reward + 0.05 * -logp).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"it {it} reward {reward.mean().item():.4f} logp {logp.mean().item():.4f} "
          f"log_std {[round(v, 4) for v in pi.log_std.tolist()]}")
print("a", a.shape, a.grad_fn.name(), "logp", logp.shape, logp.grad_fn.name())
print("batch", d.batch_shape, "event", d.event_shape)

n = Normal(torch.zeros(3), torch.tensor([0.5, 1.0, 2.0]))
print(n)
print("entropy", [round(v, 5) for v in n.entropy().tolist()])
print("cdf/icdf", [round(v, 5) for v in n.icdf(n.cdf(torch.tensor([0.3, -1.0, 2.0]))).tolist()])
print("normal w/ generator", [round(v, 4) for v in
                              torch.normal(n.loc, n.scale, generator=torch.Generator().manual_seed(5)).tolist()])
g = torch.Generator().manual_seed(9)
st = g.get_state()
first = torch.randn(3, generator=g)
g.set_state(st)
print("replay equal", torch.equal(first, torch.randn(3, generator=g)), st.dtype, st.shape)

# mistakes
for bad in (lambda: Categorical(probs=torch.tensor([0.5, -0.1, 0.6])),
            lambda: Normal(torch.zeros(2), torch.tensor([1.0, 0.0])),
            lambda: Categorical(logits=torch.zeros(3)).log_prob(torch.tensor(5)),
            lambda: Categorical()):
    try:
        bad()
    except ValueError as e:
        print("ValueError:", str(e).splitlines()[0][:160])
print(list(pi.state_dict().keys()), list(policy.state_dict().keys()))
