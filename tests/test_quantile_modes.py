"""torch.quantile / nanquantile interpolation modes against PyTorch, where a rank q * (n - 1)
falls exactly half-way between two values: "nearest" rounds it half to even (jnp's rounds a
half down). Values, shapes with dim/keepdim, NaN slices and gradients."""
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

# n = 4, 8, 200: ranks 1.5, 3.5, 99.5 (half-way, the odd-below cases) and 2.5 for n = 6
Q = [0.0, 0.1, 0.5, 0.9, 1.0]


def _both(fn, arr, q, requires_grad=False):
    outs = []
    for lib in (torch, torchish):
        x = lib.tensor(arr, requires_grad=requires_grad)
        out = fn(lib, x, lib.tensor(q, dtype=x.dtype) if isinstance(q, list) else q)
        if requires_grad:
            out.sum().backward()
        outs.append((out, x.grad))
    (ref, ref_grad), (got, got_grad) = outs
    assert tuple(got.shape) == tuple(ref.shape) and str(got.dtype) == str(ref.dtype)
    np.testing.assert_array_equal(got.detach().numpy(), ref.detach().numpy())
    if requires_grad:
        np.testing.assert_array_equal(got_grad.numpy(), ref_grad.numpy())


@pytest.mark.parametrize("n", [4, 6, 8, 200])
@pytest.mark.parametrize("interpolation", ["nearest", "lower", "higher", "midpoint"])
def test_half_way_ranks(n, interpolation):
    arr = np.random.default_rng(n).permutation(n).astype(np.float32)
    _both(lambda m, x, q: m.quantile(x, q, interpolation=interpolation), arr, Q)
    _both(lambda m, x, q: m.quantile(x, q, interpolation=interpolation), arr, 0.5)


@pytest.mark.parametrize("keepdim", [False, True])
def test_nearest_dims_and_grad(keepdim):
    arr = np.random.default_rng(0).standard_normal((3, 4, 2))
    for dim in (0, 1, -1, None):
        _both(lambda m, x, q: m.quantile(x, q, dim=dim, keepdim=keepdim,
                                         interpolation="nearest"), arr, [0.5, 0.25], True)
        _both(lambda m, x, q: m.quantile(x, q, dim=dim, keepdim=keepdim,
                                         interpolation="nearest"), arr, 0.5, True)


def test_nearest_nan():
    arr = np.arange(12, dtype=np.float64).reshape(3, 4)
    arr[0, 1] = arr[2, :] = np.nan
    for name in ("quantile", "nanquantile"):
        _both(lambda m, x, q: getattr(m, name)(x, q, dim=1, interpolation="nearest"), arr,
              [0.5, 1.0])
        _both(lambda m, x, q: getattr(m, name)(x, q, interpolation="nearest"), arr, 0.5)


@pytest.mark.parametrize("case", [
    lambda m: m.quantile(m.empty(0, 3), 0.5, dim=1),
    lambda m: m.quantile(m.tensor([], dtype=m.long), 0.5),
    lambda m: m.quantile(m.tensor([]), 1.5),
    lambda m: m.nanquantile(m.tensor([]), 0.5),
    lambda m: m.quantile(m.tensor([]), m.tensor([[0.5]])),
    lambda m: m.quantile(m.tensor([1.0]), m.tensor([[0.5]])),
    lambda m: m.quantile(m.tensor([1, 2]), m.tensor([[0.5]])),
])
def test_empty_input_and_q_rank_errors_in_pytorchs_order(case):
    got = []
    for lib in (torch, torchish):
        with pytest.raises(RuntimeError) as info:
            case(lib)
        got.append(str(info.value))
    assert got[0] == got[1]


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("x, q", [([], [0.5]), ([1.0, 2.0], [[0.5]])])
def test_shape_errors_inside_compile(name, x, q):
    # the operands are traced there; the check still sees their shapes (PyTorch's compiled
    # quantile raises these too, a RuntimeError naming the same error)
    with pytest.raises(RuntimeError) as info:
        getattr(torch, name)(torch.tensor(x), torch.tensor(q))
    compiled = torchish.compile(lambda a, b: getattr(torchish, name)(a, b))
    with pytest.raises(RuntimeError, match=re.escape(str(info.value))):
        compiled(torchish.tensor(x), torchish.tensor(q))


def _error(fn):
    try:
        fn()
    except Exception as e:   # (the comparison is of type and message)
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", [
    lambda m: m.quantile(m.arange(4.), 2.0),     # a number q as C++ prints it ("2")
    lambda m: m.quantile(m.arange(4.), 1e10),
    lambda m: m.quantile(m.arange(4.), -0.25, dim=0),
    lambda m: m.quantile(m.empty(0), 2.0, dim=3),    # q range, then empty, then dim
    lambda m: m.quantile(m.empty(0), 0.5, dim=3),
    lambda m: m.quantile(m.arange(4.), 0.5, dim=3),
    lambda m: m.nanquantile(m.arange(4.).reshape(2, 2), 0.5, dim=-3),
    lambda m: m.quantile(m.tensor(3.), 0.5, dim=1),
    lambda m: m.quantile(m.arange(4.), m.tensor([0.5], dtype=m.float64), dim=3),  # dtype first
    lambda m: m.quantile(m.arange(4.), m.tensor([2.0]), dim=3),    # dim before q's values
    lambda m: m.quantile(m.arange(4.), m.tensor([2.0]), dim=0),
])
def test_number_q_and_dim_errors_in_pytorchs_order(case):
    ref = _error(lambda: case(torch))
    assert ref is not None and _error(lambda: case(torchish)) == ref
