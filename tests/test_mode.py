"""`mode` reports the index PyTorch's CPU kernel reports, ties included: the last index of the
modal run in libstdc++'s (unstable) `std::sort` order. Compared with real PyTorch on many
random rows with few distinct values, so ties are everywhere."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def check(x, **kw):
    v, i = torch.mode(x, **kw)
    tv, ti = torchish.mode(torchish.tensor(x.numpy()), **kw)
    np.testing.assert_array_equal(ti.numpy(), i.numpy())
    np.testing.assert_array_equal(tv.numpy(), v.numpy())
    assert tuple(tv.shape) == tuple(v.shape) and str(tv.dtype) == str(v.dtype)


@pytest.mark.parametrize("n", [1, 5, 16, 17, 40, 200])
def test_ties_float_and_int(n):
    g = torch.Generator().manual_seed(n)
    rows = [torch.randint(0, k, (40, n), generator=g) for k in (2, 3, 5, 50)]
    x = torch.cat(rows)
    check(x.float())
    check(x)


def test_seed_example():
    torch.manual_seed(0)
    x = torch.randint(0, 3, (40,)).float()
    check(x)
    assert torchish.mode(torchish.tensor(x.numpy()))[1].item() == 20


@pytest.mark.parametrize("n", [7, 100])
def test_nan(n):
    g = torch.Generator().manual_seed(100 + n)
    x = torch.randint(0, 3, (60, n), generator=g).float()
    x[torch.rand(60, n, generator=g) < 0.2] = float("nan")
    v, i = torch.mode(x)
    tv, ti = torchish.mode(torchish.tensor(x.numpy()))
    np.testing.assert_array_equal(ti.numpy(), i.numpy())
    np.testing.assert_array_equal(tv.numpy(), v.numpy())   # (NaN == NaN here)


@pytest.mark.parametrize("dim,keepdim", [(0, False), (2, True)])
def test_dims(dim, keepdim):
    g = torch.Generator().manual_seed(7)
    x = torch.randint(0, 3, (20, 19, 18), generator=g).float()
    check(x, dim=dim, keepdim=keepdim)


@pytest.mark.parametrize("dtype", ["bool", "float16"])
def test_dtypes(dtype):
    g = torch.Generator().manual_seed(3)
    x = torch.randint(0, 2, (30, 40), generator=g).to(getattr(torch, dtype))
    check(x)


def test_structured_rows():
    # sorted, reversed and blocky rows drive the introsort through its other paths
    n = 100
    x = torch.stack([torch.arange(n) % 7, torch.arange(n).flip(0) // 9, torch.arange(n) // 3,
                     torch.zeros(n, dtype=torch.long), (torch.arange(n) * 37) % 4]).float()
    check(x)
