"""REINFORCE policy gradient on a toy 4-armed bandit with torch.distributions.Categorical."""
import torch
import torch.distributions as D

torch.manual_seed(0)
true_rewards = torch.tensor([0.1, 0.5, 0.9, 0.3])
logits = torch.zeros(4, requires_grad=True)
opt = torch.optim.Adam([logits], lr=0.1)
baseline = 0.0
for step in range(60):
    dist = D.Categorical(logits=logits)
    actions = dist.sample((16,))
    rewards = true_rewards[actions] + 0.1 * torch.randn(16)
    baseline = 0.9 * baseline + 0.1 * rewards.mean().item()
    loss = -((rewards - baseline) * dist.log_prob(actions)).mean() - 0.01 * dist.entropy()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(step, actions.tolist(), f"{loss.item():.5f}", dist.probs.detach())
final = D.Categorical(logits=logits)
print(final.probs, final.entropy(), final.mode, final.batch_shape, final.event_shape)
print(final.log_prob(torch.arange(4)), final.sample((3, 2)))
onehot = D.OneHotCategorical(logits=logits.detach())
print(onehot.sample((2,)), onehot.entropy(), D.kl_divergence(final, D.Categorical(torch.ones(4))))
b = D.Bernoulli(logits=torch.tensor([-1.0, 0.0, 2.0]))
print(b.sample((2,)), b.log_prob(torch.tensor([1.0, 0.0, 1.0])), b.entropy(), b.mean, b.variance)
