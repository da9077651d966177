"""Statistics: quantile/nanquantile (modes, dims, gradients, errors), dist."""
import torch


x = torch.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 9.0]])
print(torch.quantile(x, 0.25), torch.quantile(x, 0.5, dim=1), torch.quantile(x, 0.5, dim=0, keepdim=True))
print(torch.quantile(x, torch.tensor([0.25, 0.5]), dim=1, keepdim=True))
print(torch.quantile(x, torch.tensor([0.1, 0.9])), x.quantile(0.3, dim=-1), torch.quantile(x, 0.5, keepdim=True))
for mode in ["linear", "lower", "higher", "midpoint", "nearest"]:
    print(mode, torch.quantile(torch.arange(6.0), 0.5, interpolation=mode), torch.quantile(torch.arange(5.0), 0.3, interpolation=mode))
print(torch.quantile(torch.tensor([1.0, float("nan"), 3.0]), 0.5), torch.nanquantile(torch.tensor([1.0, float("nan"), 3.0]), 0.5))
print(torch.nanquantile(torch.tensor([[1.0, float("nan")], [2.0, 4.0]]), 0.5, dim=1), torch.quantile(torch.tensor(3.0), 0.2))
print(torch.quantile(torch.arange(4, dtype=torch.float64), 0.5))
w = torch.tensor([1.0, 4.0, 2.0, 8.0], requires_grad=True)
q = torch.quantile(w, 0.4)
q.backward()
print(q, w.grad)
for bad in [lambda: torch.quantile(torch.arange(5), 0.5), lambda: torch.quantile(x, 1.5),
            lambda: torch.quantile(x, torch.tensor([0.1], dtype=torch.float64)),
            lambda: torch.quantile(x, 0.5, interpolation="foo"), lambda: torch.quantile(x, torch.tensor([0.5, 2.0]))]:
    try:
        bad()
    except RuntimeError as e:
        print("RuntimeError:", e)

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 6.0, 3.0])
d = torch.dist(a, b)
d.backward()
print(d, a.grad, torch.dist(a, b, 1), a.dist(b, p=0), torch.dist(a, b, float("inf")), torch.dist(a, b, 3))
print(torch.dist(torch.tensor([1.0, 2]), torch.tensor([1, 3])), torch.dist(torch.zeros(2, 2), torch.ones(2)))
try:
    torch.dist(torch.tensor([1, 2]), torch.tensor([1, 2]))
except RuntimeError as e:
    print("RuntimeError:", e)
