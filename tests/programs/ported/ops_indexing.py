"""Indexing tricks: boolean masks, fancy indexing, index_select, gather/scatter, where, nonzero."""
import torch

torch.manual_seed(0)
x = torch.arange(20.0).reshape(4, 5)
print(x[x > 10])
print(x[:, [0, 2, 4]], x[[0, 3]], x[[0, 1], [2, 3]])
print(x[1], x[-1, -2:], x[..., 1], x[None, 0].shape, x[:, None].shape)
print(x[torch.tensor([True, False, True, False])])
print(x[1:3, ::2], x[torch.tensor([2, 0])][:, 1:3])
idx = torch.tensor([[0, 1], [2, 3]])
print(x[idx].shape, x[idx, 0])
y = x.clone()
y[y > 15] = 0
y[0] = -1
y[:, 1] = torch.tensor([9.0, 8.0, 7.0, 6.0])
y[[1, 2], [3, 4]] = 100
print(y)
print(torch.index_select(x, 0, torch.tensor([0, 2])), x.index_select(1, torch.tensor([4, 0])))
print(torch.gather(x, 1, torch.tensor([[0, 1], [2, 3], [4, 0], [1, 1]])))
print(torch.zeros(3, 5).scatter(1, torch.tensor([[0], [2], [4]]), 1.0))
print(torch.zeros(3, 5).scatter_(0, torch.tensor([[0, 1, 2, 0, 1]]), torch.ones(1, 5) * 5))
print(torch.zeros(5).scatter_add(0, torch.tensor([0, 1, 1, 3, 3, 3]), torch.ones(6)))
print(torch.zeros(2, 3).scatter_reduce(1, torch.tensor([[0, 0, 1], [2, 2, 2]]), torch.tensor([[1.0, 2, 3], [4, 5, 6]]), reduce="amax", include_self=False))
print(torch.zeros(5).index_add(0, torch.tensor([0, 4, 0]), torch.tensor([1.0, 2.0, 3.0])))
print(torch.zeros(2, 4).index_fill(1, torch.tensor([1, 3]), -1.0))
print(torch.zeros(3).index_put_((torch.tensor([0, 2]),), torch.tensor([5.0, 6.0])))
print(torch.where(x > 9, x, torch.zeros_like(x)))
print(torch.where(x > 9, x, -1.0), torch.where(torch.tensor([1, 0, 2]) > 0))
print(torch.nonzero(torch.tensor([[0, 1], [1, 0]])), torch.tensor([0, 3, 0, 4]).nonzero())
print(torch.nonzero(torch.tensor([0, 3, 0, 4]), as_tuple=True), torch.argwhere(torch.tensor([[0, 1], [1, 1]])))
print(torch.count_nonzero(x > 5), torch.count_nonzero(x, dim=0))
