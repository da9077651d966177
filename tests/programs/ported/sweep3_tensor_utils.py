"""Tensor utilities used in vision/audio/data code: F.unfold/F.fold patches, roll, flip,
tril_indices/triu_indices, bucketize/searchsorted, histc/histogram, cumsum/cumprod/cummax,
logcumsumexp, nan handling, stable sort, unique with counts/inverse, unique_consecutive,
masked_select/masked_scatter, index_put_ with accumulate, and printing."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
img = torch.arange(2 * 3 * 4 * 4, dtype=torch.float32).reshape(2, 3, 4, 4)
patches = F.unfold(img, kernel_size=2, stride=2)
print(patches.shape, patches[0, :4])
back = F.fold(patches, output_size=(4, 4), kernel_size=2, stride=2)
print(torch.equal(back, img))
ov = F.unfold(img, kernel_size=3, padding=1)
cnt = F.fold(torch.ones_like(ov), (4, 4), kernel_size=3, padding=1)
print(ov.shape, cnt[0, 0])
print(F.unfold(img[:1, :1], kernel_size=(2, 3), dilation=(1, 1), stride=(1, 1)).shape)

x = torch.arange(10)
print(x.roll(3), x.roll(-2), torch.roll(x.view(2, 5), shifts=(1, 2), dims=(0, 1)))
print(torch.flip(x.view(2, 5), [0, 1]), x.view(2, 5).fliplr(), x.view(2, 5).flipud())
print(torch.tril_indices(4, 4), torch.triu_indices(3, 4, offset=1), torch.tril_indices(3, 2, -1))
bounds = torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0])
v = torch.rand(8)
print(v, torch.bucketize(v, bounds), torch.bucketize(v, bounds, right=True))
print(torch.searchsorted(bounds, torch.tensor([[0.1, 0.5], [0.9, 1.0]]), side="right"))
print(torch.searchsorted(bounds, 0.5), torch.searchsorted(torch.tensor([3, 1, 2]), torch.tensor([2]), sorter=torch.tensor([1, 2, 0])))
r = torch.randn(100)
print(torch.histc(r, bins=5, min=-2, max=2), torch.histc(torch.tensor([1., 2., 1.]), bins=4))
h = torch.histogram(r, bins=4, range=(-2.0, 2.0))
print(h.hist, h.bin_edges)
h2 = torch.histogram(r, bins=torch.tensor([-3.0, -1.0, 0.0, 3.0]), density=True)
print(h2)
c = torch.tensor([[1., 2., 3.], [0.5, -1., 2.]])
print(c.cumsum(1), c.cumprod(0), torch.cummax(c, 1), torch.cummin(c[1], 0))
print(torch.logcumsumexp(c, dim=1), c.cumsum(0).dtype, torch.tensor([1, 2, 3]).cumsum(0).dtype)
n = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), 2.0])
print(torch.nan_to_num(n), torch.nan_to_num(n, nan=0.0, posinf=9.0, neginf=-9.0))
print(n.isnan(), n.isinf(), n.isfinite(), torch.nansum(n[:2]), torch.nanmean(n[[0, 1, 4]]))
print(torch.nanmedian(torch.tensor([3.0, float("nan"), 1.0, 2.0])), torch.fmax(n, torch.zeros(5)), torch.maximum(n, torch.zeros(5)))
keys = torch.tensor([3, 1, 2, 1, 3, 1, 0])
sv, si = torch.sort(keys, stable=True)
print(sv, si, torch.sort(keys, descending=True, stable=True).indices, torch.argsort(keys, stable=True))
u, inv, cnts = torch.unique(keys, return_inverse=True, return_counts=True)
print(u, inv, cnts, torch.unique(keys, sorted=True))
print(torch.unique(torch.tensor([[1, 2], [1, 2], [0, 5]]), dim=0, return_counts=True))
print(torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 2, 1, 3, 3]), return_counts=True, return_inverse=True))
m = torch.randn(3, 4)
mask = m > 0
print(m.masked_select(mask), torch.zeros(3, 4).masked_scatter(mask, torch.arange(12.)))
t = torch.zeros(5)
t.index_put_((torch.tensor([0, 2, 0, 4]),), torch.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True)
print(t)
g = torch.zeros(3, 3)
g.index_put_((torch.tensor([0, 1, 1]), torch.tensor([2, 0, 0])), torch.tensor(5.0), accumulate=True)
print(g, g[torch.tensor([True, False, True])])
g[g == 0] = -1
g[:, torch.tensor([0, 2])] += 0.5
print(g)
print(torch.diff(torch.tensor([1, 4, 9, 16])), torch.diff(c, n=1, dim=0, prepend=torch.zeros(1, 3)))
print(torch.clamp(m, min=-0.5, max=0.5), m.clip(max=0), torch.where(mask, m, torch.tensor(0.0)))
print(torch.count_nonzero(mask, dim=1), torch.argwhere(mask)[:3], mask.any(1), mask.all())
print(torch.kthvalue(m, 2, dim=1), torch.mode(torch.tensor([1, 2, 2, 3, 3])), torch.median(m, 1))
print(torch.topk(m.flatten(), 3, largest=False), torch.msort(m[:, 0]))
print(torch.bincount(keys), torch.bincount(keys, weights=torch.ones(7) * 0.5, minlength=6))
try:
    torch.bucketize(v, torch.tensor([[0.0, 1.0]]))
except Exception as e:
    print(type(e).__name__, e)
try:
    F.fold(patches, output_size=(5, 5), kernel_size=2, stride=2)
except Exception as e:
    print(type(e).__name__, e)
