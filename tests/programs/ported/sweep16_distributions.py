"""A torch.distributions zoo: a Gaussian mixture (MixtureSameFamily over Independent Normals)
fitted by maximum likelihood, TransformedDistribution chains (Affine / Exp / Sigmoid / Tanh)
with rsample gradients, Categorical / OneHotCategorical / RelaxedOneHotCategorical, KL
divergences, a user-defined Distribution subclass, and the validate_args error messages."""
import torch
import torch.distributions as D
from torch.distributions import constraints
from torch.distributions import transforms as T

torch.manual_seed(0)
data = torch.cat([torch.randn(6, 2) * 0.5 + 2.0, torch.randn(6, 2) * 0.3 - 1.0])
logits = torch.zeros(3, requires_grad=True)
means = torch.tensor([[1.0, 1.0], [-0.5, -0.5], [0.0, 1.0]], requires_grad=True)
log_scales = torch.zeros(3, 2, requires_grad=True)
opt = torch.optim.Adam([logits, means, log_scales], lr=0.1)
for step in range(3):
    gmm = D.MixtureSameFamily(D.Categorical(logits=logits),
                              D.Independent(D.Normal(means, log_scales.exp()), 1))
    nll = -gmm.log_prob(data).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
    print(step, f"{nll.item():.5f}", nll.grad_fn.name())
print(gmm, gmm.batch_shape, gmm.event_shape)
print("mean", gmm.mean, "sample", gmm.sample((2,)))

loc = torch.tensor([0.5, -0.2], requires_grad=True)
scale = torch.tensor([1.0, 0.7], requires_grad=True)
chain = D.TransformedDistribution(D.Normal(loc, scale), [T.AffineTransform(1.0, 2.0), T.ExpTransform()])
z = chain.rsample((3,))
(z.log().mean() + chain.log_prob(z.detach()).sum()).backward()
print(chain.support, z.grad_fn.name(), loc.grad, scale.grad)
squash = D.TransformedDistribution(D.Normal(torch.zeros(2), 1.0), [T.TanhTransform(cache_size=1)])
a = squash.rsample()
print("tanh", a, squash.log_prob(a))
ct = T.ComposeTransform([T.AffineTransform(0.0, 2.0), T.SigmoidTransform()])
print(ct.inv(ct(torch.tensor(0.5))), ct.log_abs_det_jacobian(torch.tensor(0.5), ct(torch.tensor(0.5))))

cat = D.Categorical(probs=torch.tensor([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]]))
print(cat, cat.sample((2,)), cat.entropy(), cat.log_prob(torch.tensor([2, 0])))
onehot = D.OneHotCategorical(logits=torch.tensor([0.0, 1.0, 2.0]))
print(onehot.sample((2,)), onehot.log_prob(torch.tensor([0.0, 0.0, 1.0])), onehot.entropy())
temp_logits = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
relaxed = D.RelaxedOneHotCategorical(torch.tensor(0.5), logits=temp_logits)
soft = relaxed.rsample()
soft[2].backward()
print("relaxed", soft, relaxed.log_prob(soft.detach()), temp_logits.grad)

p = D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
q = D.Normal(torch.tensor([1.0, 1.0]), torch.tensor([1.0, 1.0]))
print("kl", D.kl_divergence(p, q), D.kl_divergence(D.Independent(p, 1), D.Independent(q, 1)))
print(D.kl_divergence(onehot, D.OneHotCategorical(probs=torch.tensor([0.2, 0.3, 0.5]))))
try:
    D.kl_divergence(gmm, gmm)
except NotImplementedError as e:
    print("NotImplementedError", e)


class Triangular(D.Distribution):
    arg_constraints = {"c": constraints.unit_interval}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, c, validate_args=None):
        self.c = torch.as_tensor(c)
        super().__init__(self.c.shape, validate_args=validate_args)

    def rsample(self, sample_shape=torch.Size()):
        u = torch.rand(self._extended_shape(sample_shape))
        return torch.where(u < self.c, (u * self.c).sqrt(), 1 - ((1 - u) * (1 - self.c)).sqrt())

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        return torch.where(x < self.c, (2 * x / self.c).log(), (2 * (1 - x) / (1 - self.c)).log())


tri = Triangular(torch.tensor([0.3, 0.6]))
print(tri, tri.sample((2,)), tri.log_prob(torch.tensor([0.2, 0.9])))
for bad in [lambda: D.Normal(0.0, -1.0), lambda: Triangular(1.5), lambda: tri.log_prob(torch.tensor([0.2, 1.9])),
            lambda: D.Categorical(probs=torch.tensor([0.5, -0.1])),
            lambda: D.Normal(torch.zeros(2), 1.0).log_prob(torch.zeros(3)),
            lambda: D.MixtureSameFamily(D.Categorical(logits=torch.zeros(2)), D.Normal(torch.zeros(3), 1.0)),
            lambda: D.Independent(D.Normal(0.0, 1.0), 1), lambda: tri.entropy()]:
    try:
        print(bad())
    except (ValueError, NotImplementedError) as e:
        print(type(e).__name__, e)
print(constraints.simplex.check(torch.tensor([0.3, 0.7])), D.biject_to(constraints.simplex))
