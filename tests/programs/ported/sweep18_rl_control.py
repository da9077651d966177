"""A small policy-gradient control script: Categorical policy with an entropy bonus, returns
discounted by a Python loop over reversed rewards, normalised advantages, a Normal policy with
rsample/log_prob/entropy, clip_grad_norm_, torch.Generator objects passed to randint/randn/
multinomial, and torch.cond."""
import torch
import torch.nn as nn
from torch.distributions import Categorical, Normal

torch.manual_seed(0)
gen = torch.Generator().manual_seed(123)
print(torch.randint(0, 5, (4,), generator=gen), torch.randn(2, generator=gen))
print(torch.multinomial(torch.tensor([0.1, 0.6, 0.3]), 4, replacement=True, generator=gen))
print(gen.initial_seed(), torch.initial_seed())
try:
    torch.randint(0, 5, (4,), generator=123)
except TypeError as e:
    print("TypeError:", str(e).splitlines()[0])
state = gen.get_state()
a = torch.rand(3, generator=gen)
gen.set_state(state)
print(torch.equal(a, torch.rand(3, generator=gen)))

policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
value = nn.Linear(4, 1)
opt = torch.optim.Adam(list(policy.parameters()) + list(value.parameters()), lr=0.01)
gamma = 0.9
for episode in range(3):
    obs = torch.randn(6, 4, generator=gen)
    dist = Categorical(logits=policy(obs))
    actions = dist.sample()
    rewards = (actions == (obs[:, 0] > 0).long()).float().tolist()
    returns, R = [], 0.0
    for r in reversed(rewards):
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    values = value(obs).squeeze(-1)
    adv = returns - values.detach()
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    logp = dist.log_prob(actions)
    entropy = dist.entropy().mean()
    loss = -(logp * adv).mean() - 0.01 * entropy + 0.5 * (returns - values).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(policy.parameters(), max_norm=0.5)
    opt.step()
    print(f"ep {episode} R {sum(rewards):.0f} loss {loss.item():.4f} ent {entropy.item():.4f} "
          f"norm {norm.item():.4f}", loss.grad_fn.name(), logp.grad_fn.name())
print(dist, dist.probs.shape, dist.logits.grad_fn.name())

mu = nn.Parameter(torch.zeros(2))
log_std = nn.Parameter(torch.full((2,), -0.5))
opt2 = torch.optim.SGD([mu, log_std], lr=0.1)
target = torch.tensor([1.0, -1.0])
for step in range(3):
    pi = Normal(mu, log_std.exp())
    act = pi.rsample((4,))
    reward = -(act - target).pow(2).sum(-1)
    loss = -reward.mean() - 0.01 * pi.entropy().sum()
    opt2.zero_grad()
    loss.backward()
    opt2.step()
    print(step, act.shape, act.grad_fn.name(), f"{loss.item():.4f}",
          pi.log_prob(act).sum(-1).shape, pi.entropy())
print(mu, log_std.grad)
with torch.no_grad():
    s = Normal(mu, log_std.exp()).sample()
print(s.requires_grad, Normal(0.0, 1.0).log_prob(torch.tensor(0.5)))
print(Normal(mu, 1.0).batch_shape, Normal(mu, 1.0).event_shape, Normal(mu, 1.0).mean.grad_fn)


def explore(x):
    return torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 1, (x,))


print(explore(torch.tensor([1.0, 2.0])), explore(torch.tensor([-1.0, -2.0])))
try:
    Categorical(probs=torch.tensor([0.5, -0.1]))
except ValueError as e:
    print("ValueError:", str(e).split("\n")[0][:90])
