"""torch.func.vmap: in_dims, out_dims, nesting, kwargs, randomness."""
import torch
from torch.func import vmap

torch.manual_seed(0)
x = torch.randn(4, 3)
y = torch.randn(3, 4)
print(vmap(torch.dot)(x, y.T))
print(vmap(torch.mul, in_dims=(0, None))(x, torch.tensor([1.0, 2.0, 3.0])))
print(vmap(lambda a, b: a + b, in_dims=(1, 0))(y, x).shape)
print(vmap(lambda a: a.sum(0), out_dims=1)(torch.ones(2, 3, 5)).shape)
outer = vmap(vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))
print(outer(torch.arange(3.0), torch.arange(4.0)))
print(vmap(lambda d: d["a"] * d["b"])({"a": x, "b": x}).shape)
print(vmap(lambda a, scale=1.0: a * scale)(x, scale=2.0).sum())
r = vmap(lambda a: (a.max(), a.argmax()))(x)
print(r)
print(vmap(torch.trace)(torch.eye(3).expand(5, 3, 3)))
print(vmap(lambda m: m @ m, chunk_size=2)(torch.randn(6, 2, 2)).shape)
batched_linear = vmap(torch.nn.functional.linear, in_dims=(0, None, None))
w = torch.randn(2, 3)
print(batched_linear(torch.randn(5, 7, 3), w, None).shape)

# randomness
try:
    vmap(lambda a: a + torch.rand(()))(x)
except RuntimeError as e:
    print("RuntimeError", "randomness" in str(e))
same = vmap(lambda a: torch.rand(3) + a * 0, randomness="same")(x)
print(same.shape, bool((same[0] == same[1]).all()))
diff = vmap(lambda a: torch.rand(3) + a * 0, randomness="different")(x)
print(diff.shape, bool((diff[0] == diff[1]).all()))
