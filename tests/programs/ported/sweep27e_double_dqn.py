"""Double DQN on a tiny chain world written in tensors: a circular replay buffer of
preallocated tensors (index_copy_ on push, randint with a seeded Generator on sample,
torch.stack of the sampled transitions), epsilon-greedy actions drawn from the same Generator,
Q(s, a) by gather, the target action from the online net and its value from the target net,
Huber loss, gradient clipping, and a hard target sync by load_state_dict every few steps."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
gen = torch.Generator().manual_seed(1234)
N_STATES, N_ACTIONS, GAMMA = 6, 2, 0.9


def one_hot_state(s):
    return F.one_hot(s, N_STATES).float()


def env_step(s, a):
    """Action 1 moves right, 0 moves left; reaching the right end pays 1 and ends."""
    nxt = (s + 2 * a - 1).clamp(0, N_STATES - 1)
    done = nxt == N_STATES - 1
    reward = torch.where(done, torch.tensor(1.0), torch.tensor(-0.01))
    return nxt, reward, done


class Replay:
    def __init__(self, capacity, obs_dim):
        self.obs = torch.zeros(capacity, obs_dim)
        self.next_obs = torch.zeros(capacity, obs_dim)
        self.actions = torch.zeros(capacity, dtype=torch.long)
        self.rewards = torch.zeros(capacity)
        self.dones = torch.zeros(capacity, dtype=torch.bool)
        self.capacity, self.ptr, self.full = capacity, 0, False

    def push(self, o, a, r, o2, d):
        idx = torch.tensor([self.ptr])
        self.obs.index_copy_(0, idx, o.unsqueeze(0))
        self.next_obs.index_copy_(0, idx, o2.unsqueeze(0))
        self.actions[self.ptr] = a
        self.rewards[self.ptr] = r
        self.dones[self.ptr] = d
        self.ptr = (self.ptr + 1) % self.capacity
        self.full = self.full or self.ptr == 0

    def __len__(self):
        return self.capacity if self.full else self.ptr

    def sample(self, n, generator):
        idx = torch.randint(len(self), (n,), generator=generator)
        rows = [(self.obs[i], self.actions[i], self.rewards[i], self.next_obs[i], self.dones[i])
                for i in idx.tolist()]
        o, a, r, o2, d = (torch.stack(col) for col in zip(*rows))
        return o, a, r, o2, d


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(N_STATES, 16), nn.ReLU())
        self.head = nn.Linear(16, N_ACTIONS)

    def forward(self, x):
        return self.head(self.body(x))


online = QNet()
target = copy.deepcopy(online)
target.requires_grad_(False)
opt = torch.optim.Adam(online.parameters(), lr=5e-3)
huber = nn.HuberLoss(delta=0.5)
buf = Replay(32, N_STATES)
print(online)
print("target keys", list(target.state_dict().keys()))


def act(state, eps):
    if torch.rand(1, generator=gen).item() < eps:
        return torch.randint(N_ACTIONS, (), generator=gen)
    with torch.no_grad():
        return online(one_hot_state(state)).argmax()


state, episode_return, returns, losses = torch.tensor(0), 0.0, [], []
for step in range(60):
    eps = max(0.1, 1.0 - step / 40)
    a = act(state, eps)
    nxt, r, done = env_step(state, a)
    buf.push(one_hot_state(state), a, r, one_hot_state(nxt), done)
    episode_return += r.item()
    state = torch.tensor(0) if done else nxt
    if done:
        returns.append(round(episode_return, 2))
        episode_return = 0.0
    if len(buf) >= 8:
        o, acts, rew, o2, d = buf.sample(8, gen)
        q = online(o).gather(1, acts.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            best = online(o2).argmax(1, keepdim=True)
            q_next = target(o2).gather(1, best).squeeze(1)
            y = rew + GAMMA * q_next * (~d).float()
        loss = huber(q, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(online.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if step == 8:
            print("batch", o.shape, acts.dtype, d.dtype, q.grad_fn.name(), loss.grad_fn.name())
            print("norm", f"{norm.item():.5f}", "y", y)
    if step % 15 == 14:
        target.load_state_dict(online.state_dict())
        print("sync", step, f"{sum(losses[-10:]) / 10:.5f}", len(buf), buf.ptr, buf.full)

print("returns", returns)
with torch.no_grad():
    q_table = online(torch.eye(N_STATES))
print("greedy", q_table.argmax(1).tolist())
print("q", q_table)
same = all(torch.equal(p, q) for p, q in zip(online.parameters(), target.parameters()))
print("synced", same, target.head.weight.requires_grad, online.head.weight.requires_grad)
print("huber vs smooth_l1", F.huber_loss(q_table[:, 0], q_table[:, 1], delta=0.5).item()
      / F.smooth_l1_loss(q_table[:, 0], q_table[:, 1], beta=0.5).item())
print("gen state", gen.get_state().shape, gen.initial_seed())
try:
    target.load_state_dict({"head.weight": torch.zeros(2, 16)})
except RuntimeError as e:
    print(str(e).splitlines()[0])
res = target.load_state_dict({"head.weight": torch.zeros(2, 16)}, strict=False)
print(res.missing_keys, res.unexpected_keys)
try:
    buf.obs.index_copy_(0, torch.tensor([0], dtype=torch.int32), torch.zeros(1, 6))
except RuntimeError as e:
    print("index_copy", e)
obs_np = one_hot_state(torch.tensor(2)).numpy()   # an environment handing back numpy arrays
try:
    buf.obs[0] = obs_np
except TypeError as e:
    print("numpy obs", e)
buf.obs[0] = torch.from_numpy(obs_np)
print("stored", buf.obs[0].argmax().item(), buf.obs.dtype)
