"""Indices among ties as PyTorch's CPU kernels report them: `topk` (std::partial_sort, or
std::nth_element then std::sort; `sorted=False` keeps nth_element's order), `sort`/`argsort`/
`msort` with `stable=False` (std::sort), `kthvalue` (PyTorch's quickselect), `nanmedian` of
an all-NaN row. Compared with real PyTorch on random rows of few distinct values, so ties are
everywhere; a traced call keeps working (with the stable order)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

# PyTorch's CPU order: torchish keeps the stable order on other devices
pytestmark = pytest.mark.usefixtures("cpu_tensors")


def rows(n, seed, dtype=torch.float32, nan=False):
    """40 rows of length n: 10 each with 1, 2, 3 and 50 distinct values."""
    g = torch.Generator().manual_seed(seed)
    x = torch.cat([torch.randint(0, k, (10, n), generator=g) for k in (1, 2, 3, 50)])
    x = x.to(dtype)
    if nan:
        x[torch.rand(x.shape, generator=g) < 0.2] = float("nan")
    return x


def ours(x):
    return torchish.tensor(x.numpy())


def same(got, want):
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            same(g, w)
        return
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want.numpy())   # (NaN == NaN here)


def test_seed_example():
    x = torch.tensor([.9, .9, .1, 0])
    assert torchish.tensor([.9, .9, .1, 0]).topk(2).indices.tolist() == [1, 0]
    same(tuple(ours(x).topk(2)), tuple(x.topk(2)))


@pytest.mark.parametrize("n,dtype", [(4, torch.float32), (20, torch.float32),
                                     (130, torch.float32), (20, torch.int64)])
def test_topk(n, dtype):
    # 130: k * 64 <= n takes std::partial_sort for k = 1, 2
    x = rows(n, n, dtype)
    y = ours(x)
    for k, largest, s in [(1, True, True), (2, True, True), (3, False, True),
                          (n // 2, True, False), (3, False, False)]:
        same(tuple(y.topk(k, largest=largest, sorted=s)),
             tuple(x.topk(k, largest=largest, sorted=s)))


@pytest.mark.parametrize("n", [5, 40])
def test_topk_nan_and_dim(n):
    x = rows(n, 10 + n, nan=True)
    same(tuple(torchish.topk(ours(x), 3)), tuple(torch.topk(x, 3)))
    same(tuple(ours(x).topk(3, largest=False)), tuple(x.topk(3, largest=False)))
    xt = x.t().contiguous()
    same(tuple(ours(xt).topk(2, 0)), tuple(xt.topk(2, 0)))


@pytest.mark.parametrize("n,dtype", [(16, torch.float32), (17, torch.float32),
                                     (60, torch.float32), (40, torch.int32),
                                     (40, torch.uint8), (40, torch.bool)])
def test_sort_unstable(n, dtype):
    x = rows(n, 20 + n, dtype)
    y = ours(x)
    same(tuple(y.sort()), tuple(x.sort()))
    same(tuple(y.sort(descending=True, stable=True)), tuple(x.sort(descending=True, stable=True)))
    same(y.argsort(descending=True), x.argsort(descending=True))
    same(tuple(torchish.sort(ours(x.t()), 0, True)), tuple(torch.sort(x.t(), 0, True)))


def test_sort_nan():
    x = rows(30, 3, nan=True)
    same(tuple(ours(x).sort()), tuple(x.sort()))
    same(tuple(ours(x).sort(descending=True)), tuple(x.sort(descending=True)))


def test_msort_gradient_follows_indices():
    x = rows(20, 4)[:, :3].contiguous()   # 40 rows sorted along dim 0
    w = torch.arange(x.numel(), dtype=torch.float32).reshape(x.shape)
    xr = x.clone().requires_grad_()
    yr = ours(x).requires_grad_()
    (torch.msort(xr) * w).sum().backward()
    (torchish.msort(yr) * ours(w)).sum().backward()
    same(yr.grad, xr.grad)


@pytest.mark.parametrize("n,dtype", [(3, torch.float32), (25, torch.float32),
                                     (25, torch.int64)])
def test_kthvalue(n, dtype):
    x = rows(n, 30 + n, dtype)
    y = ours(x)
    for k in sorted({1, (n + 1) // 2, n}):
        same(tuple(y.kthvalue(k)), tuple(x.kthvalue(k)))
    same(tuple(torchish.kthvalue(ours(x.t()), 2, 0, True)),
         tuple(torch.kthvalue(x.t(), 2, 0, True)))
    if dtype.is_floating_point:
        xn = rows(n, 40 + n, nan=True)
        same(tuple(ours(xn).kthvalue(n)), tuple(xn.kthvalue(n)))


def test_median_nanmedian():
    x = rows(21, 5, nan=True)
    x[:3] = float("nan")   # all-NaN rows: nanmedian's index is nth_element's
    for fn in ("median", "nanmedian"):
        same(tuple(getattr(ours(x), fn)(1)), tuple(getattr(x, fn)(1)))
        same(tuple(getattr(ours(x.t()), fn)(0, True)), tuple(getattr(x.t(), fn)(0, True)))


def test_topk_gradient_and_out():
    x = torch.tensor([[.9, .9, .1, 0, .9], [1, 2, 2, 2, 0]], requires_grad=True)
    y = torchish.tensor(x.tolist(), requires_grad=True)
    w = [[1., 2., 3.], [4., 5., 6.]]
    tv, ti = x.topk(3)
    v, i = y.topk(3)
    assert type(v.grad_fn).__name__ == "TopkBackward0"
    (tv * torch.tensor(w)).sum().backward()
    (v * torchish.tensor(w)).sum().backward()
    same(y.grad, x.grad)
    same((v.detach(), i), (tv.detach(), ti))
    ov, oi = torchish.empty(0), torchish.empty(0, dtype=torchish.int64)
    torchish.topk(y.detach(), 3, out=(ov, oi))
    same((ov, oi), (tv.detach(), ti))


def test_traced_call_keeps_working():
    # inside a trace the order is the stable one (no host replay)
    f = torchish.compile(lambda t: (t.topk(2), t.sort(), t.kthvalue(2), t.argsort()))
    (v, i), (sv, si), (kv, ki), a = f(torchish.tensor([.9, .9, .1, 0] * 5))
    assert i.tolist() == [0, 1] and v.tolist() == pytest.approx([.9, .9])
    stable = [3, 7, 11, 15, 19, 2, 6, 10, 14, 18, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17]
    assert si.tolist() == a.tolist() == stable
    assert kv.item() == 0 and ki.item() == 7
