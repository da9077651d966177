# Data preprocessing written with tensor ops instead of loops, as in feature pipelines:
# overlapping image patches with F.unfold and overlap-add back with F.fold, sliding windows on
# a signal with Tensor.unfold, per-segment statistics with scatter_reduce / index_reduce /
# index_put_(accumulate=True), deduplication with unique(dim=0), ranking with sort/topk/
# kthvalue, binning with bucketize/searchsorted/histc, and view bookkeeping (strides,
# contiguity, storage offsets) along the way. Gradients flow through the differentiable parts.
import torch
import torch.nn.functional as F

torch.manual_seed(0)

# 1. patches: unfold -> normalise per patch -> fold with overlap-add, divide by the counts
img = torch.randn(2, 3, 8, 8, requires_grad=True)
patches = F.unfold(img, kernel_size=4, stride=2, padding=1)
print(patches.shape, patches.grad_fn.name(), patches.is_contiguous())
P = patches.view(2, 3, 16, -1)
P = (P - P.mean(2, keepdim=True)) / (P.std(2, keepdim=True) + 1e-5)
back = F.fold(P.reshape(2, 48, -1), output_size=(8, 8), kernel_size=4, stride=2, padding=1)
counts = F.fold(torch.ones_like(patches), output_size=(8, 8), kernel_size=4, stride=2, padding=1)
out = back / counts
print(counts[0, 0, :3, :3], out.shape, out.grad_fn.name())
out.pow(2).mean().backward()
print(f"{img.grad.abs().sum().item():.5f}", f"{out.mean().item():.6f}")

# 2. sliding windows over a 1-D signal, then framing statistics
sig = torch.sin(torch.linspace(0, 12.0, 50)) + 0.1 * torch.randn(50)
frames = sig.unfold(0, 10, 4)
print(frames.shape, frames.stride(), frames.is_contiguous(), frames.storage_offset())
energy = frames.pow(2).sum(1)
zc = (frames[:, 1:] * frames[:, :-1] < 0).sum(1)
print(energy, zc, zc.dtype)
win = torch.hann_window(10, periodic=False)
spec = torch.fft.rfft(frames * win, dim=1).abs()
print(spec.shape, spec.argmax(1))
# zero-phase frames: magnitudes written back in place through the .real/.imag views
cplx = torch.fft.rfft(frames, dim=1)
cplx.real.copy_(cplx.abs())
cplx.imag.zero_()
zp = torch.fft.irfft(cplx, n=10, dim=1)
print(zp.shape, f"{zp[0, 0].item():.5f}", cplx.real._base is cplx, cplx.imag.stride())
sig_p = sig.clone().requires_grad_()
phase_loss = torch.fft.rfft(sig_p).imag.pow(2).mean()
phase_loss.backward()
print(f"{phase_loss.item():.5f}", phase_loss.grad_fn.name(), f"{sig_p.grad.norm().item():.5f}")

# 3. segment statistics on a point cloud's cluster ids
pts = torch.randn(20, 2)
seg = torch.randint(0, 5, (20,))
seg[:5] = torch.arange(5)                       # every segment non-empty
mx = torch.full((5, 2), float("-inf")).scatter_reduce(0, seg[:, None].expand(-1, 2), pts,
                                                       reduce="amax", include_self=False)
mean = torch.zeros(5, 2).index_reduce_(0, seg, pts, "mean", include_self=False)
cnt = torch.zeros(5, dtype=torch.long).index_put_((seg,), torch.ones(20, dtype=torch.long),
                                                  accumulate=True)
sums = torch.zeros(5, 2).index_add_(0, seg, pts)
print(mx, mean, cnt, torch.allclose(mean, sums / cnt[:, None]))
prod = torch.ones(5).scatter_reduce(0, seg, pts[:, 0], reduce="prod")
print(prod, seg.bincount(weights=pts[:, 1]))
w = torch.randn(20, requires_grad=True)
pooled = torch.zeros(5).scatter_reduce(0, seg, w, reduce="mean", include_self=False)
pooled.sum().backward()
print(pooled.grad_fn.name(), w.grad[:6])

# 4. dedup, rank, and bin
rows = torch.tensor([[1, 2], [3, 4], [1, 2], [0, 9], [3, 4], [3, 4]])
u, inv, c = torch.unique(rows, dim=0, return_inverse=True, return_counts=True)
print(u.tolist(), inv.tolist(), c.tolist())
uc, ci = torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 2, 1, 3, 3]), return_counts=True)
print(uc, ci)
scores = torch.tensor([0.3, 0.9, 0.1, 0.9, 0.5, 0.3, 0.7])
vals, order = scores.sort(descending=True, stable=True)
print(vals, order, scores.argsort(stable=True))
print(scores.topk(3, largest=False, sorted=True), scores.kthvalue(2), scores.mode())
edges = torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0])
print(torch.bucketize(scores, edges), torch.bucketize(scores, edges, right=True))
unsorted = torch.tensor([0.5, 0.0, 1.0, 0.25])
sorter = unsorted.argsort()
print(torch.searchsorted(unsorted, torch.tensor([0.3, 0.5]), side="right", sorter=sorter))
print(torch.histc(scores, bins=4, min=0, max=1), scores.histogram(bins=3))
print(scores.cummax(0), torch.logcumsumexp(scores, 0))

# 5. masks and in-place writes
x = torch.arange(12.0).view(3, 4)
m = x.remainder(3) == 0
print(x.masked_select(m), torch.nonzero(m, as_tuple=True), torch.argwhere(m).T)
y = x.clone().masked_scatter_(m, torch.full((12,), -1.0))
y.index_fill_(1, torch.tensor([3]), 100.0)
y.index_copy_(0, torch.tensor([2]), torch.zeros(1, 4))
print(y, m.count_nonzero(1))
z = torch.zeros(6)
z.put_(torch.tensor([0, 2, 2, 5]), torch.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True)
print(z, z.take(torch.tensor([[2, 5]])))
t = torch.arange(24).reshape(2, 3, 4)
v = t.permute(2, 0, 1)
print(v.shape, v.stride(), v.is_contiguous(), v.contiguous().stride(), t.mT.shape)
s = t[:, 1:, ::2]
print(s.stride(), s.storage_offset(), s.unflatten(2, (1, 2)).shape, t.movedim(0, -1).shape)
print(torch.diff(scores, prepend=torch.tensor([0.0])), scores.tensor_split([2, 5]))
print(torch.repeat_interleave(torch.tensor([1, 2, 3]), torch.tensor([2, 0, 1])),
      torch.take_along_dim(x, x.argmax(1, keepdim=True), dim=1).T, x.roll(1, 1)[0], x.rot90()[0])
