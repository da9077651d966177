"""torch.* math helpers: allclose/isclose, clamp, lerp, norm, cdist, meshgrid, cumsum/einsum."""
import torch

f = torch.tensor([0.5, 1.5, 2.5])
x = torch.arange(6.0).reshape(2, 3)
print(torch.clamp(x, min=torch.tensor([1.0, 2.0, 3.0])), x.clamp_(0, 4), x)
print(torch.lerp(torch.zeros(3), torch.ones(3) * 10, 0.25), torch.lerp(torch.zeros(2), torch.ones(2), torch.tensor([0.1, 0.9])))
v = torch.tensor([[3.0, 4.0], [6.0, 8.0]])
print(torch.norm(v), v.norm(dim=1), v.norm(p=1), torch.norm(v, p="fro"), torch.linalg.norm(v, ord=2), torch.linalg.vector_norm(v, ord=float("inf")))
print(v.norm(2, dim=0, keepdim=True), torch.dist(v[0], v[1]), torch.nn.functional.normalize(v, dim=1))
p = torch.tensor([[0.0, 0.0], [1.0, 1.0], [3.0, 4.0]])
print(torch.cdist(p, p), torch.cdist(p, p[:2], p=1), torch.pdist(p))
gx, gy = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="ij")
print(gx, gy, torch.meshgrid(torch.arange(2), torch.arange(3), indexing="xy")[0])
print(torch.cumsum(torch.arange(5), 0), torch.cumsum(x, dim=1), torch.cumprod(torch.tensor([1.0, 2, 3]), 0), torch.cummax(torch.tensor([1, 3, 2, 5]), 0))
print(torch.cumsum(torch.tensor([1, 2], dtype=torch.int32), 0).dtype, torch.arange(4).sum().dtype, torch.tensor([True, True]).sum())
print(torch.einsum("ij,jk->ik", x, x.T), torch.einsum("i,i->", f, f), torch.einsum("bij->bji", torch.ones(2, 1, 3)).shape, torch.einsum("ii", torch.eye(3)))
print(torch.einsum("i,j->ij", torch.tensor([1.0, 2]), torch.tensor([3.0, 4, 5])), torch.einsum("...ij,...jk", torch.ones(2, 2, 3), torch.ones(3, 1)).shape)
print(x.mean(), x.mean(0), x.std(), x.var(1, unbiased=False), x.std(dim=0, correction=0), torch.std_mean(x), torch.var_mean(x, 1))
