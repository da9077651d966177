"""Everyday tensor plumbing: where with scalars, clamp with tensor bounds, masked_fill_,
scatter_/gather/index_select, einsum (batched attention, bilinear, trace), stack/cat/split/
chunk/unbind, repeat_interleave, meshgrid, tril/triu masks, contiguous().view() after permute,
the view error on a non-contiguous tensor, no_grad views of parameters, .data vs .detach()."""
import torch

torch.manual_seed(0)
x = torch.randn(2, 3, 4)
print(torch.where(x > 0, x, 0.0).sum(), torch.where(x > 0, 1, -1).dtype)
lo, hi = torch.full((4,), -0.5), torch.tensor([0.1, 0.2, 0.3, 0.4])
print(torch.clamp(x[0], min=lo, max=hi))
m = x.clone()
m.masked_fill_(m < 0, float("-inf"))
print(m[0, 0], torch.softmax(m, -1)[0, 0])
idx = torch.tensor([[0, 2, 1, 0], [1, 1, 0, 2]])
z = torch.zeros(3, 4).scatter_(0, idx, torch.ones(2, 4), reduce="add")
print(z)
print(torch.gather(x[0], 1, torch.tensor([[3, 0], [1, 1], [2, 0]])))
print(x.index_select(2, torch.tensor([3, 1])).shape)

q, k, v = torch.randn(3, 2, 5, 4).unbind(0)
att = torch.einsum("bqd,bkd->bqk", q, k) / 4 ** 0.5
causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
att = att.masked_fill(causal, float("-inf")).softmax(-1)
out = torch.einsum("bqk,bkd->bqd", att, v)
print(out.shape, att[0, 1], torch.tril(torch.ones(3, 3)).sum())
W = torch.randn(3, 4, 4)
print(torch.einsum("bi,oij,bj->bo", q[:, 0], W, k[:, 0]))
print(torch.einsum("ii", W[0]), torch.einsum("ii->i", W[0]).shape, W[0].trace())

parts = torch.arange(10.).split([3, 3, 4])
print([p.tolist() for p in parts], [c.shape for c in torch.arange(10.).chunk(3)])
s = torch.stack([x[0], x[1]], dim=1)
print(s.shape, torch.cat([x, x], dim=-1).shape, torch.cat((x[0], x[1])).shape)
print(torch.tensor([1, 2, 3]).repeat_interleave(torch.tensor([2, 0, 1])),
      torch.arange(2).repeat_interleave(2), x[0, 0].repeat(2))
gi, gj = torch.meshgrid(torch.arange(2), torch.arange(3), indexing="ij")
print(gi, gj, torch.stack([gi, gj], -1).shape)

p = x.permute(0, 2, 1)
print(p.is_contiguous(), p.stride(), p.contiguous().view(2, -1).shape, p.reshape(-1).shape)
try:
    p.view(2, -1)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    x.t()
except RuntimeError as e:
    print("RuntimeError:", e)
print(x.transpose(0, 2).flatten(1).shape, x.mT.shape)

lin = torch.nn.Linear(4, 2)
with torch.no_grad():
    w = lin.weight[0]
    w2 = lin.weight * 2
print(w.requires_grad, w._base is lin.weight, w2.requires_grad, w2.grad_fn)
a = lin.weight.data
b = lin.weight.detach()
print(a.requires_grad, b.requires_grad, a.grad_fn, b.is_leaf, a.data_ptr() == b.data_ptr())
y = lin(x).sum()
lin.weight.data.mul_(0)
y.backward()
print(lin.weight.grad, lin.weight.sum())
c = lin.bias.detach()
c.zero_()
print(lin.bias, lin.bias._version)
try:
    lin.bias.detach().requires_grad_().mul_(2).sum().backward()
    lin(x).sum().backward()
    print("ok", lin.bias.grad)
except RuntimeError as e:
    print("RuntimeError:", e)
