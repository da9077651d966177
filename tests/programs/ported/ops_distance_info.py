"""pdist/cdist, isin, vander, finfo/iinfo, f-string formatting of 0-d tensors, ravel/type_as."""
import torch

pts = torch.tensor([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0], [0.0, 0.0]], requires_grad=True)
pd = torch.pdist(pts)
pd.sum().backward()
print(pd, pts.grad, torch.pdist(pts.detach(), p=1), torch.pdist(pts.detach(), p=float("inf")), torch.pdist(torch.ones(1, 3)))
print(torch.cdist(pts.detach(), pts.detach()[:2]), torch.cdist(torch.ones(2, 3, 2), torch.zeros(2, 1, 2)).shape)

print(torch.isin(torch.tensor([1, 2, 3, 4]), torch.tensor([2, 4, 6])), torch.isin(torch.tensor([[1, 2], [3, 4]]), torch.tensor([[4]])))
print(torch.isin(torch.tensor([1.0, 2.5]), torch.tensor([2.5])), torch.isin(torch.tensor([1, 2]), 2), torch.isin(torch.tensor([1, 2]), torch.tensor([2]), invert=True))
labels = torch.tensor([0, 3, 1, 3, 2])
print(labels[torch.isin(labels, torch.tensor([1, 3]))])

print(torch.vander(torch.tensor([1, 2, 3])), torch.vander(torch.tensor([1.0, 2.0]), N=4), torch.vander(torch.tensor([2, 3]), 3, increasing=True))
v = torch.tensor([1.0, 2.0], requires_grad=True)
print(torch.vander(v).grad_fn.name(), torch.vander(torch.tensor([1, 2], dtype=torch.int32)).dtype)

print(torch.finfo(torch.float32), torch.finfo(torch.float16), torch.finfo(torch.bfloat16), torch.finfo(torch.float64))
print(torch.iinfo(torch.int32), torch.iinfo(torch.uint8), torch.iinfo(torch.int64).max, torch.iinfo(torch.int8).bits, torch.finfo().eps)
print(torch.finfo(torch.float32).eps, torch.finfo(torch.float32).tiny, torch.finfo(torch.float16).max, torch.finfo(torch.float32).dtype, torch.finfo(torch.complex64).bits)
eps = torch.finfo(torch.float32).eps
print(torch.log(torch.tensor([0.0, 1.0]) + eps), torch.tensor([1e30]).clamp(max=torch.finfo(torch.float16).max).half())
for bad in [lambda: torch.finfo(torch.int32), lambda: torch.iinfo(torch.float32)]:
    try:
        bad()
    except TypeError as e:
        print("TypeError:", e)

loss = torch.tensor(0.123456, requires_grad=True) * 2
print(f"loss {loss:.4f}", f"{loss}", "{:>8.2f}|".format(torch.tensor(3.14159)), f"{torch.tensor(7)}", f"{torch.tensor(True)}")
print("acc {:.1%}".format(torch.tensor(0.875)), f"{torch.tensor([1.0, 2.0])}")
m = torch.arange(6.0).reshape(2, 3)
print(m.ravel(), torch.ravel(m.t()), m.type_as(torch.tensor([1])), torch.tensor([1, 2]).type_as(m), m.t().ravel().is_contiguous())
g = torch.ones(2, 3, requires_grad=True)
print(g.ravel().grad_fn.name(), g.t().ravel().grad_fn.name(), g.type_as(torch.zeros(1, dtype=torch.float64)).grad_fn.name())
