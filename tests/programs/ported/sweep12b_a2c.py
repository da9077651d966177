"""Advantage actor-critic on a tiny hand-written corridor environment: a shared-body policy/value
net, torch.distributions.Categorical from logits (sample, log_prob, entropy), GAE computed
backwards in a Python loop with zeros_like / stack / flip, advantage normalisation with the
unbiased std, value loss with F.smooth_l1_loss, RMSprop(centered=True) and clip_grad_norm_."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)
N_STATES, N_ACTIONS, GAMMA, LAM = 5, 2, 0.9, 0.95


class Corridor:
    """Walk left/right on a line; reward 1 at the right end, small cost per step."""
    def __init__(self):
        self.pos = 0

    def reset(self):
        self.pos = 0
        return self.obs()

    def obs(self):
        return F.one_hot(torch.tensor(self.pos), N_STATES).float()

    def step(self, action):
        self.pos = max(0, min(N_STATES - 1, self.pos + (1 if action == 1 else -1)))
        done = self.pos == N_STATES - 1
        return self.obs(), (1.0 if done else -0.05), done


class ActorCritic(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(N_STATES, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, N_ACTIONS)
        self.v = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.body(x)
        return self.pi(h), self.v(h).squeeze(-1)


def gae(rewards, values, dones, last_value):
    adv = torch.zeros_like(rewards)
    running = torch.tensor(0.0)
    for t in reversed(range(len(rewards))):
        next_value = last_value if t == len(rewards) - 1 else values[t + 1]
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + GAMMA * next_value * nonterminal - values[t]
        running = delta + GAMMA * LAM * nonterminal * running
        adv[t] = running
    return adv, adv + values


net = ActorCritic()
opt = torch.optim.RMSprop(net.parameters(), lr=0.01, alpha=0.95, eps=1e-5, centered=True)
env = Corridor()
obs = env.reset()
for update in range(4):
    states, actions, rewards, dones = [], [], [], []
    for t in range(6):
        with torch.no_grad():
            logits, _ = net(obs)
        action = Categorical(logits=logits).sample()
        nxt, r, done = env.step(action.item())
        states.append(obs); actions.append(action); rewards.append(r); dones.append(float(done))
        obs = env.reset() if done else nxt
    states = torch.stack(states)
    actions = torch.stack(actions)
    rewards = torch.tensor(rewards)
    dones = torch.tensor(dones)
    logits, values = net(states)
    with torch.no_grad():
        _, last_value = net(obs)
    adv, returns = gae(rewards, values.detach(), dones, last_value)
    # the same returns-to-go, computed forward on the flipped sequence
    flipped = torch.stack([rewards.flip(0)[: i + 1].sum() for i in range(len(rewards))]).flip(0)
    adv_n = (adv - adv.mean()) / (adv.std() + 1e-8)
    dist = Categorical(logits=logits)
    log_prob = dist.log_prob(actions)
    entropy = dist.entropy().mean()
    policy_loss = -(log_prob * adv_n).mean()
    value_loss = F.smooth_l1_loss(values, returns)
    loss = policy_loss + 0.5 * value_loss - 0.01 * entropy
    opt.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.5)
    opt.step()
    print(f"update {update}: actions {actions.tolist()} "
          f"rewards {[round(r, 2) for r in rewards.tolist()]}")
    print(f"  adv {[round(a, 4) for a in adv.tolist()]} std {adv.std().item():.5f} "
          f"std(unbiased=False) {adv.std(unbiased=False).item():.5f}")
    print(f"  loss {loss.item():.5f} policy {policy_loss.item():.5f} value {value_loss.item():.5f} "
          f"entropy {entropy.item():.5f} norm {norm.item():.5f}")
    print("  returns-to-go", [round(x, 4) for x in flipped.tolist()])

print(log_prob.grad_fn.name(), entropy.grad_fn.name(), value_loss.grad_fn.name())
print(dist, dist.probs.shape, dist.logits.logsumexp(-1).abs().max() < 1e-5)
print(sorted(opt.state[net.pi.weight].keys()), opt.param_groups[0]["centered"])
d = Categorical(probs=torch.tensor([0.2, 0.3, 0.5]))
print(d.log_prob(torch.tensor([0, 2])), d.entropy(), d.mode, d.sample((2, 3)).shape)
try:
    Categorical(logits=torch.zeros(3)).log_prob(torch.tensor(3))
except ValueError as e:
    print("ValueError", str(e)[:80])
