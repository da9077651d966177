"""Regression tests for what the sweep23b ported programs exposed, against real PyTorch:
`round(decimals=d)` rounded as PyTorch's CPU kernel (a true division by 10**d, half types
computed in float32), and nll_loss/cross_entropy comparing batch sizes before the target's rank."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("decimals", [3, 2, 1, 0, -1, -2])
def test_round_decimals_bits(dtype, decimals):
    gen = torch.Generator().manual_seed(decimals + 7)
    x = (torch.randn(3000, generator=gen) * 300).to(getattr(torch, dtype))
    ours = torchish.tensor(x.float().numpy()).to(getattr(torchish, dtype))
    for theirs, mine in ((x.round(decimals=decimals), ours.round(decimals=decimals)),
                         (torch.special.round(x, decimals=decimals),
                          torchish.special.round(ours, decimals=decimals))):
        assert str(mine.dtype) == str(theirs.dtype)
        np.testing.assert_array_equal(mine.double().numpy(), theirs.double().numpy())


def test_round_decimals_inplace_grad_and_jit():
    vals = [0.48199999, 0.391, 0.131, 1.2345, -0.0015, 2.675]
    t = torch.tensor(vals, requires_grad=True)
    o = torchish.tensor(vals, requires_grad=True)
    rt, ro = t.round(decimals=3), o.round(decimals=3)
    assert ro.tolist() == rt.tolist()
    assert ro.grad_fn.name() == rt.grad_fn.name()
    rt.sum().backward()
    ro.sum().backward()
    assert o.grad.tolist() == t.grad.tolist()
    a, b = torch.tensor(vals), torchish.tensor(vals)
    a.round_(decimals=2)
    b.round_(decimals=2)
    assert b.tolist() == a.tolist()
    compiled = torchish.compile(lambda x: x.round(decimals=3))
    assert compiled(torchish.tensor(vals)).tolist() == torch.tensor(vals).round(decimals=3).tolist()


def _error(T, fn, input_shape, target_shape, dtype):
    F = T.nn.functional
    with pytest.raises(Exception) as info:
        getattr(F, fn)(T.randn(input_shape), T.zeros(target_shape, dtype=getattr(T, dtype)))
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("fn,input_shape,target_shape,dtype", [
    ("nll_loss", (5, 4), (4, 4), "int64"),        # batch differs and target is 2-D
    ("nll_loss", (5, 4), (5, 4), "int64"),        # same batch: the rank error
    ("nll_loss", (5, 4), (), "int64"),
    ("nll_loss", (5, 4), (3, 2), "int64"),
    ("nll_loss", (5, 4), (4,), "float32"),
    ("nll_loss", (2, 3, 4), (3, 4), "int64"),
    ("nll_loss", (2, 3, 4), (2, 5), "int64"),
    ("nll_loss", (2, 3, 4, 5), (3, 4, 5), "int64"),
    ("nll_loss", (2, 3, 4, 5), (2, 4), "int64"),
    ("nll_loss", (4,), (3, 2), "int64"),
    ("cross_entropy", (5, 4), (4, 4), "float32"),  # probabilities of the wrong batch size
    ("cross_entropy", (5, 4), (4, 4), "int64"),
    ("cross_entropy", (5, 4), (3,), "float32"),
    ("cross_entropy", (5, 4), (), "int64"),
])
def test_nll_shape_check_order(fn, input_shape, target_shape, dtype):
    assert _error(torchish, fn, input_shape, target_shape, dtype) == \
        _error(torch, fn, input_shape, target_shape, dtype)


def _search_warnings(T):
    import warnings
    b = T.arange(10.0)[::2]
    calls = [lambda: T.searchsorted(T.arange(10.0), T.tensor([2.5, 7.0])),
             lambda: T.bucketize(T.tensor(3.0), b),
             lambda: T.searchsorted(b, T.tensor([0.5, 3.0]),
                                    sorter=T.stack([T.arange(5), T.arange(5)], 1)[:, 0]),
             lambda: T.searchsorted(b.contiguous(), T.rand(6)[::2], right=True),
             lambda: T.bucketize(T.rand(8)[::2], b.contiguous(), out_int32=True),
             lambda: T.searchsorted(b.contiguous(), 2.0)]
    seen = []
    previous = T.is_warn_always_enabled()
    T.set_warn_always(True)
    try:
        for call in calls:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                call()
            seen.append([str(w.message) for w in caught])
    finally:
        T.set_warn_always(previous)
    return seen


def test_searchsorted_warns_about_non_contiguous_operands():
    assert _search_warnings(torchish) == _search_warnings(torch)


def test_bucketize_is_no_tensor_method():
    assert hasattr(torchish.Tensor, "bucketize") == hasattr(torch.Tensor, "bucketize")
    assert hasattr(torchish.Tensor, "searchsorted") == hasattr(torch.Tensor, "searchsorted")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_division_by_an_expanded_view_is_correctly_rounded(dtype):
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(400, 8, generator=gen).to(getattr(torch, dtype))
    n = torch.randn(400, 1, generator=gen).to(getattr(torch, dtype))
    A = torchish.tensor(a.double().numpy()).to(getattr(torchish, dtype))
    N = torchish.tensor(n.double().numpy()).to(getattr(torchish, dtype))
    expected = (a / n.expand_as(a)).double().numpy()
    np.testing.assert_array_equal((A / N.expand_as(A)).double().numpy(), expected)
    a.div_(n.expand_as(a))
    A.div_(N.expand_as(A))
    np.testing.assert_array_equal(A.double().numpy(), expected)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_distances_accumulate_in_float32(dtype):
    F, G = torch.nn.functional, torchish.nn.functional
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(300, 8, generator=gen).to(getattr(torch, dtype))
    b = torch.randn(300, 8, generator=gen).to(getattr(torch, dtype))
    A, B = (torchish.tensor(x.float().numpy()).to(getattr(torchish, dtype)) for x in (a, b))
    ones, ONES = torch.ones(3, 4).half(), torchish.ones(3, 4).half()
    pairs = [(F.pairwise_distance(ones, ones), G.pairwise_distance(ONES, ONES)),
             (F.cosine_similarity(a, b), G.cosine_similarity(A, B)),
             (F.normalize(a, dim=1), G.normalize(A, dim=1))]
    for theirs, ours in pairs:
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


def _pdist_error(T):
    with pytest.raises(RuntimeError) as info:
        T.pdist(T.ones(3, 2), p=-1)
    return str(info.value)


def test_pdist_rejects_negative_p():
    assert _pdist_error(torchish) == _pdist_error(torch)
