"""PPO actor-critic on a toy environment written in torch: a Categorical policy for a discrete
task and a Normal policy for a continuous one, GAE with a reversed loop, the clipped surrogate,
an entropy bonus, clip_grad_norm_, minibatches via randperm, smooth_l1 value loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, Normal

torch.manual_seed(0)


class LineWorld:
    """Walk on a line towards 0; reward is minus the distance."""

    def __init__(self, n):
        self.n = n
        self.pos = torch.zeros(n)

    def reset(self):
        self.pos = torch.rand(self.n) * 4 - 2
        return self.pos.unsqueeze(-1).clone()

    def step(self, move):
        self.pos = (self.pos + move).clamp(-3.0, 3.0)
        reward = -self.pos.abs()
        done = self.pos.abs() < 0.25
        return self.pos.unsqueeze(-1).clone(), reward, done.float()


class ActorCritic(nn.Module):
    def __init__(self, continuous):
        super().__init__()
        self.continuous = continuous
        self.body = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        self.pi = nn.Linear(16, 1 if continuous else 3)
        self.v = nn.Linear(16, 1)
        self.log_std = nn.Parameter(torch.full((1,), -0.5))

    def dist(self, obs):
        h = self.body(obs)
        if self.continuous:
            mu = self.pi(h)
            return Normal(mu, self.log_std.exp().expand_as(mu)), self.v(h).squeeze(-1)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    adv = torch.zeros_like(rewards)
    running = torch.zeros_like(last_value)
    for t in reversed(range(rewards.size(0))):
        nxt = last_value if t == rewards.size(0) - 1 else values[t + 1]
        delta = rewards[t] + gamma * nxt * (1 - dones[t]) - values[t]
        running = delta + gamma * lam * (1 - dones[t]) * running
        adv[t] = running
    return adv, adv + values


def train(continuous):
    env = LineWorld(8)
    model = ActorCritic(continuous)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, eps=1e-5)
    for it in range(3):
        obs_buf, act_buf, logp_buf, val_buf, rew_buf, done_buf = [], [], [], [], [], []
        obs = env.reset()
        with torch.no_grad():
            for t in range(12):
                d, v = model.dist(obs)
                a = d.sample()
                if continuous:
                    move = a.squeeze(-1).tanh()
                    logp = d.log_prob(a).sum(-1)
                else:
                    move = (a - 1).float() * 0.5
                    logp = d.log_prob(a)
                nobs, r, done = env.step(move)
                obs_buf.append(obs); act_buf.append(a); logp_buf.append(logp)
                val_buf.append(v); rew_buf.append(r); done_buf.append(done)
                obs = nobs
            _, last_v = model.dist(obs)
        rewards, values, dones = torch.stack(rew_buf), torch.stack(val_buf), torch.stack(done_buf)
        adv, returns = gae(rewards, values, dones, last_v)
        obs_all = torch.cat(obs_buf)
        act_all = torch.cat(act_buf)
        logp_old = torch.cat(logp_buf)
        adv = adv.flatten()
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        returns = returns.flatten()
        for epoch in range(2):
            perm = torch.randperm(obs_all.size(0))
            for idx in perm.split(32):
                d, v = model.dist(obs_all[idx])
                logp = d.log_prob(act_all[idx])
                if continuous:
                    logp = logp.sum(-1)
                ratio = (logp - logp_old[idx]).exp()
                s1 = ratio * adv[idx]
                s2 = torch.clamp(ratio, 1 - 0.2, 1 + 0.2) * adv[idx]
                policy_loss = -torch.min(s1, s2).mean()
                value_loss = F.smooth_l1_loss(v, returns[idx])
                entropy = d.entropy().mean()
                loss = policy_loss + 0.5 * value_loss - 0.01 * entropy
                opt.zero_grad()
                loss.backward()
                norm = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                opt.step()
            clipfrac = ((ratio - 1).abs() > 0.2).float().mean()
            print(f"it {it} ep {epoch} pl {policy_loss.item():.5f} vl {value_loss.item():.5f} "
                  f"ent {entropy.item():.5f} norm {norm.item():.5f} clip {clipfrac.item():.3f}")
        print("return", rewards.sum(0).mean().item(), "adv", adv.shape, returns.grad_fn)
    print(loss.grad_fn.name(), type(ratio.grad_fn).__name__, policy_loss.grad_fn.name(),
          value_loss.grad_fn.name())
    return model


m1 = train(False)
m2 = train(True)
print(m2.log_std)
d, v = m1.dist(torch.tensor([[1.0], [-1.0]]))
print(d.probs, d.logits.shape, v)
print(Categorical(probs=torch.tensor([0.2, 0.3, 0.5])).entropy())
n = Normal(torch.zeros(2), torch.ones(2))
print(n.rsample().shape, n.log_prob(torch.tensor([0.5, -0.5])), n.entropy())
try:
    Categorical(probs=torch.tensor([[-0.1, 1.1]]))
except ValueError as e:
    print("ValueError", e)
