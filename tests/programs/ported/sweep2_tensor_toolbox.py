"""Tensor manipulation as found in data pipelines and research utilities: combinations /
cartesian_prod pair features, block_diag, tensordot, renorm, aminmax, nanmedian/nanquantile,
logcumsumexp, logaddexp, hypot, copysign, frexp/ldexp, signbit, heaviside, corrcoef, diagflat,
hsplit/vsplit/dsplit, as_strided sliding windows, Tensor.unfold, index_reduce, scatter with
reduce, put_/take, bitwise ops and shifts, and printing of the results."""
import torch

torch.manual_seed(0)

pts = torch.randn(5, 2)
pairs = torch.combinations(torch.arange(5), r=2)
print(pairs.shape, pairs[:4])
print(torch.combinations(torch.tensor([1, 2, 3]), r=2, with_replacement=True))
d = (pts[pairs[:, 0]] - pts[pairs[:, 1]]).norm(dim=1)
print(d)
grid = torch.cartesian_prod(torch.tensor([0, 1]), torch.tensor([5, 6, 7]))
print(grid, torch.cartesian_prod(torch.tensor([1., 2.])))

a, b = torch.randn(2, 2), torch.arange(6.).reshape(2, 3)
print(torch.block_diag(a, b, torch.tensor([[7.0]])))
x, y = torch.randn(3, 4, 5), torch.randn(4, 5, 2)
print(torch.tensordot(x, y, dims=2).shape, torch.tensordot(x, y, dims=([1, 2], [0, 1])).sum())
print(torch.tensordot(torch.arange(3.), torch.arange(4.), dims=0))

w = torch.randn(4, 3) * 3
print(torch.renorm(w, p=2, dim=0, maxnorm=1.0).norm(dim=1))
print(torch.aminmax(w), torch.aminmax(w, dim=1, keepdim=True).max.shape)
z = torch.tensor([[1.0, float("nan"), 3.0, 2.0], [float("nan"), float("nan"), 5.0, -1.0]])
print(torch.nanmedian(z), torch.nanmedian(z, dim=1))
print(torch.nanquantile(z, 0.25, dim=1), torch.nanmean(z, dim=0), torch.nansum(z))
print(torch.quantile(torch.arange(10.), torch.tensor([0.1, 0.5, 0.95]), interpolation="midpoint"))

s = torch.randn(6)
print(torch.logcumsumexp(s, dim=0), torch.logaddexp(s, s.flip(0)), torch.logaddexp2(s, s))
print(torch.hypot(s, s.roll(1)), torch.copysign(torch.ones(6), s), torch.signbit(torch.tensor([-0.0, 0.0, -1.0])))
m, e = torch.frexp(torch.tensor([8.0, 0.3, -5.0, 0.0]))
print(m, e, torch.ldexp(m, e))
print(torch.heaviside(torch.tensor([-1.5, 0.0, 2.0]), torch.tensor([0.5])))
print(torch.nextafter(torch.tensor([1.0]), torch.tensor([2.0])) - 1)
obs = torch.randn(3, 10)
print(torch.corrcoef(obs), torch.cov(obs, correction=0).diagonal())
print(torch.diagflat(torch.tensor([1, 2])), torch.diagflat(torch.tensor([1, 2]), offset=1).shape)

t = torch.arange(24).reshape(2, 3, 4)
print([p.shape for p in torch.hsplit(t, 3)], [p.shape for p in torch.vsplit(t, [1])],
      [p.shape for p in torch.dsplit(t, 2)])
sig = torch.arange(10.)
win = sig.as_strided((4, 4), (2, 1))
print(win, win.is_contiguous(), win.stride())
print(sig.unfold(0, 3, 2), sig.unfold(0, 3, 2).stride())
frames = torch.arange(2 * 8.).reshape(2, 8).unfold(-1, 4, 2)
print(frames.shape, frames.mean(-1))

src = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
idx = torch.tensor([0, 1, 0, 2, 1, 0])
for red in ["prod", "mean", "amax", "amin"]:
    out = torch.ones(3).index_reduce(0, idx, src, red, include_self=False)
    print(red, out)
print(torch.zeros(3).index_reduce_(0, idx, src, "mean"))
print(torch.zeros(2, 3).scatter(1, torch.tensor([[0, 1, 0], [2, 2, 1]]), 2.0, reduce="add"))
print(torch.ones(2, 3).scatter(1, torch.tensor([[0, 1, 0], [2, 2, 1]]), torch.full((2, 3), 3.0),
                               reduce="multiply"))
buf = torch.zeros(2, 3)
buf.put_(torch.tensor([1, 4, 1]), torch.tensor([9.0, 8.0, 7.0]), accumulate=True)
print(buf, torch.take(buf, torch.tensor([[1, 4], [0, 5]])))

i = torch.tensor([12, 10, 7, -3], dtype=torch.int32)
print(i & 6, i | 1, i ^ 5, ~i, i << 2, i >> 1, torch.bitwise_left_shift(i, 1))
print(torch.bitwise_and(torch.tensor([True, False]), torch.tensor([True, True])))
print(torch.gcd(torch.tensor([12, 18]), torch.tensor([8, 27])), torch.lcm(torch.tensor([4, 6]), torch.tensor([6, 4])))
v = torch.randn(4, requires_grad=True)
out = torch.logcumsumexp(v, 0).sum() + torch.hypot(v, torch.ones(4)).sum() + torch.nanmedian(v)
out.backward()
print(out.grad_fn.name(), v.grad)
q = torch.randn(3, 3, requires_grad=True)
r = torch.renorm(q, 1, 1, 0.5)
r.sum().backward()
print(r.grad_fn.name(), q.grad)
