"""A DQN update as in the reinforcement-learning tutorial: replay batch, target net, soft update."""
import math
import random
from collections import deque, namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)
random.seed(0)
Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))


class ReplayMemory:
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


class DQN(nn.Module):
    def __init__(self, n_observations, n_actions):
        super().__init__()
        self.layer1 = nn.Linear(n_observations, 32)
        self.layer2 = nn.Linear(32, 32)
        self.layer3 = nn.Linear(32, n_actions)

    def forward(self, x):
        x = F.relu(self.layer1(x))
        x = F.relu(self.layer2(x))
        return self.layer3(x)


BATCH_SIZE, GAMMA, TAU, LR = 8, 0.99, 0.005, 1e-3
EPS_START, EPS_END, EPS_DECAY = 0.9, 0.05, 1000
policy_net = DQN(4, 2)
target_net = DQN(4, 2)
target_net.load_state_dict(policy_net.state_dict())
optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
memory = ReplayMemory(100)
steps_done = 0


def select_action(state):
    global steps_done
    sample = random.random()
    eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1.0 * steps_done / EPS_DECAY)
    steps_done += 1
    if sample > eps_threshold:
        with torch.no_grad():
            return policy_net(state).max(1).indices.view(1, 1)
    return torch.tensor([[random.randrange(2)]], dtype=torch.long)


def optimize_model():
    transitions = memory.sample(BATCH_SIZE)
    batch = Transition(*zip(*transitions))
    non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), dtype=torch.bool)
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    next_state_values = torch.zeros(BATCH_SIZE)
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected = (next_state_values * GAMMA) + reward_batch
    criterion = nn.SmoothL1Loss()
    loss = criterion(state_action_values, expected.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()
    return loss


state = torch.randn(1, 4)
for t in range(24):
    action = select_action(state)
    reward = torch.tensor([1.0 if action.item() == 0 else -0.5])
    next_state = None if t % 7 == 6 else torch.randn(1, 4)
    memory.push(state, action, next_state, reward)
    state = next_state if next_state is not None else torch.randn(1, 4)
    if len(memory) >= BATCH_SIZE:
        loss = optimize_model()
        target_net_state_dict = target_net.state_dict()
        policy_net_state_dict = policy_net.state_dict()
        for key in policy_net_state_dict:
            target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[key] * (1 - TAU)
        target_net.load_state_dict(target_net_state_dict)
        if t % 4 == 0:
            print(f"t={t} loss={loss.item():.5f} action={action.item()} mem={len(memory)}")

diff = sum((a - b).abs().sum() for a, b in zip(policy_net.parameters(), target_net.parameters()))
print(f"policy/target distance {diff.item():.5f}")
print(steps_done, optimizer.state_dict()["param_groups"][0]["amsgrad"])
st = optimizer.state[policy_net.layer3.bias]
print(sorted(st.keys()), st["step"], f"{st['max_exp_avg_sq'].sum().item():.6e}")
q = policy_net(torch.randn(5, 4))
print(q.shape, q.max(1), sep="\n")
