"""Differential tests against PyTorch for the less common tensor ops: splits, scatters,
statistics, integer math, linalg extras, in-place metadata ops and their errors."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402
from warn_once_runs import stdout_of_both  # noqa: E402

warnings.filterwarnings("ignore", message=".*chain_matmul is deprecated.*")
warnings.filterwarnings("ignore", message=".*index_reduce.*")

RNG = np.random.default_rng(0)


def _data(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def _pair(arr, requires_grad=False):
    a = torch.tensor(arr, requires_grad=requires_grad)
    b = torchish.tensor(arr, requires_grad=requires_grad)
    return a, b


def _to_np(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _same(ref, got, rtol=1e-7, atol=1e-7, grad_fn=True):
    if isinstance(ref, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(ref) == len(got)
        for r, g in zip(ref, got):
            _same(r, g, rtol, atol, grad_fn)
        return
    if isinstance(ref, (bool, int, float)):
        assert ref == got
        return
    assert str(ref.dtype).split(".")[1] == str(got.dtype).split(".")[1]
    assert tuple(ref.shape) == tuple(got.shape)
    np.testing.assert_allclose(_to_np(got), _to_np(ref), rtol=rtol, atol=atol)
    if grad_fn:
        rn = None if ref.grad_fn is None else type(ref.grad_fn).__name__
        gn = None if got.grad_fn is None else type(got.grad_fn).__name__
        assert rn == gn, (rn, gn)


def _outputs(out):
    if isinstance(out, (tuple, list)):
        return [o for part in out for o in _outputs(part)]
    if out.is_complex():
        return [out.real, out.imag]
    return [out] if out.dtype.is_floating_point else []


def _check(fn, *arrays, grad=True, rtol=1e-7, atol=1e-7, inputs=None):
    """fn(lib, *tensors) in both libraries: values, dtypes, grad_fn names and gradients of
    the sum of floating outputs w.r.t. the float64 inputs."""
    ref_in, got_in = [], []
    for a in arrays:
        diff = grad and isinstance(a, np.ndarray) and a.dtype == np.float64
        if isinstance(a, np.ndarray):
            r, g = _pair(a, diff)
        else:
            r, g = a, a
        ref_in.append(r)
        got_in.append(g)
    ref = fn(torch, *ref_in)
    got = fn(torchish, *got_in)
    _same(ref, got, rtol, atol, grad_fn=grad)
    leaves = [(r, g) for r, g in zip(ref_in, got_in) if getattr(r, "requires_grad", False)]
    if grad and leaves:
        r_out, g_out = _outputs(ref), _outputs(got)
        sum(o.sum() for o in r_out).backward()
        sum(o.sum() for o in g_out).backward()
        for r, g in leaves:
            if r.grad is None:
                assert g.grad is None or not g.grad.abs().sum().item()
            else:
                np.testing.assert_allclose(_to_np(g.grad), _to_np(r.grad), rtol=1e-6,
                                           atol=1e-6)
    return ref, got


def _raises(fn, *arrays):
    ref_in = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
    got_in = [torchish.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
    with pytest.raises(Exception) as ref:
        fn(torch, *ref_in)
    with pytest.raises(type(ref.value)) as got:
        fn(torchish, *got_in)
    assert str(got.value) == str(ref.value)


# ---- splits ------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda T, x: T.hsplit(x, 3), lambda T, x: T.hsplit(x, [1, 4]),
    lambda T, x: x.vsplit(2), lambda T, x: T.vsplit(x, [3]),
    lambda T, x: T.tensor_split(x * 1, 4, 1), lambda T, x: (x * 1).tensor_split([1, -2]),
    lambda T, x: T.tensor_split(x, [3, 1]), lambda T, x: T.tensor_split(x, T.tensor(3), 1),
    lambda T, x: T.tensor_split(x, T.tensor([1, 5]), 1)])
def test_splits(fn):
    _check(fn, _data(4, 6))


def test_dsplit_and_1d_hsplit():
    _check(lambda T, x: T.dsplit(x, 2), _data(2, 3, 4))
    _check(lambda T, x: T.hsplit(x, 2), _data(6))


@pytest.mark.parametrize("fn", [
    lambda T, x: T.hsplit(x, 4), lambda T, x: T.vsplit(x[0], 2), lambda T, x: T.dsplit(x, 2),
    lambda T, x: T.hsplit(x[0, 0], 1), lambda T, x: T.tensor_split(x, 0),
    lambda T, x: T.tensor_split(x, T.tensor([[1]])),
    lambda T, x: T.tensor_split(x, T.tensor([1.]))])
def test_split_errors(fn):
    _raises(fn, _data(4, 6))


def test_tensor_split_outputs_are_views():
    x = torchish.arange(6.)
    parts = x.tensor_split(3)
    assert all(p._base is x for p in parts)


def test_index_with_0d_tensor_is_a_select_view():
    _check(lambda T, y: (y * 1)[T.tensor(1)], _data(3, 4))
    y = torchish.zeros(3, 4)
    assert y[torchish.tensor(2)]._base is y
    _check(lambda T, y: y[:, T.tensor(-1, dtype=T.int32)], _data(3, 4))
    _check(lambda T, y: (y * 1)[T.tensor(1), T.tensor([0, 2])], _data(3, 4))
    _raises(lambda T, y: y[T.tensor(5)], _data(3, 4))


# ---- pointwise ---------------------------------------------------------------------------

def test_gcd_lcm():
    a = np.array([4, 6, 0, -12, 7])
    b = np.array([6, -9, 0, 18, 0])
    _check(lambda T, a, b: (T.gcd(a, b), T.lcm(a, b), a.gcd(b), a.lcm(b)), a, b)
    _check(lambda T, a, b: T.gcd(a.int(), b), a, b)
    _check(lambda T, a, b: (a.clone().gcd_(b), a.clone().lcm_(b)), a, b)
    _raises(lambda T, a: T.gcd(a, a), np.array([1.5]))
    _raises(lambda T, a: T.lcm(a, a), np.array([True]))


def test_float_power():
    x = np.abs(_data(5)) + 0.5
    _check(lambda T, x: T.float_power(x, 2), x)
    _check(lambda T, x: T.float_power(x, x), x)
    _check(lambda T, x: T.float_power(2, x), x)
    _check(lambda T, x: x.float_power(0.5), x)
    _check(lambda T, x: T.float_power(x.float(), 2), x)
    _check(lambda T, a: T.float_power(a, 2), np.array([2, 3]))
    _check(lambda T, a: T.float_power(a, a.float()), np.array([2, 3]))
    _check(lambda T, x: x.clone().float_power_(2), x)
    _raises(lambda T, x: x.float().float_power_(2), x)


def test_nextafter():
    x, y = _data(6), _data(6)
    _check(lambda T, x, y: T.nextafter(x, y), x, y)
    _check(lambda T, x, y: (T.nextafter(x.float(), y.float()) - x.float()), x, y,
           rtol=0, atol=0)
    _check(lambda T, x, y: x.clone().nextafter_(y), x, y)
    _raises(lambda T, a: T.nextafter(a, a), np.array([1, 2]))


@pytest.mark.parametrize("name", ["relu_", "sigmoid_", "exp_", "abs_", "tanh_"])
def test_inplace_functions(name):
    x = _data(5)

    def fn(T, x):
        y = x * 1
        out = getattr(T, name)(y)
        assert out is y
        return y
    _check(fn, x)
    _check(lambda T, x: T.clamp_(x * 1, -0.5, 0.5), x)


# ---- shape and structure -----------------------------------------------------------------

def test_diagflat_combinations_unravel():
    _check(lambda T, x: (T.diagflat(x), x.diagflat(1), T.diagflat(x[0], -2)), _data(2, 3))
    _check(lambda T, x: (T.combinations(x), T.combinations(x, 3),
                         T.combinations(x, 2, with_replacement=True)), _data(4))
    _check(lambda T, a: (T.combinations(a, 0), T.combinations(a, 5)), np.array([1, 2, 3]))
    _raises(lambda T, a: T.combinations(a, -1), np.array([1, 2]))
    _raises(lambda T, a: T.combinations(a, 2), np.array([[1, 2]]))
    idx = np.array([4, 1, 7, -1, -7])
    _check(lambda T, i: T.unravel_index(i, (2, 3)), idx)
    _check(lambda T, i: T.unravel_index(i.reshape(1, 5), 6), idx)
    _check(lambda T, i: T.unravel_index(i[0], (2, 3, 1)), idx)
    _raises(lambda T, i: T.unravel_index(i, (2, -3)), idx)
    _raises(lambda T, i: T.unravel_index(i.float(), (2, 3)), idx)


def test_view_as_real_complex():
    x = _data(3, 2)
    _check(lambda T, x: T.view_as_complex(x), x)
    _check(lambda T, x: T.view_as_real(T.view_as_complex(x)), x)
    _check(lambda T, x: T.view_as_real(T.view_as_complex(x) * 2), x)
    _raises(lambda T, x: T.view_as_real(x), x)
    _raises(lambda T, x: T.view_as_complex(x[:, :1].contiguous()), x)
    _raises(lambda T, a: T.view_as_complex(a), np.array([[1, 2]]))


def test_narrow_copy_and_scatters():
    x = _data(4, 6)
    _check(lambda T, x: (T.narrow_copy(x, 1, 1, 3), x.narrow_copy(0, 2, 2)), x)
    # (PyTorch's backward fails for a negative start: values only)
    _check(lambda T, x: x.narrow_copy(0, -2, 2), x, grad=False)
    _raises(lambda T, x: T.narrow_copy(x, 1, 4, 3), x)
    s = _data(6)
    _check(lambda T, x, s: (T.select_scatter(x, s, 0, 1), x.select_scatter(s[:4], 1, -1)),
           x, s)
    _check(lambda T, x, s: (T.slice_scatter(x, s[:4].reshape(4, 1).expand(4, 2), 1, 0, 2),
                            T.slice_scatter(x, s.reshape(1, 6).expand(2, 6), 0, 1, None, 2),
                            x.slice_scatter(s[:3].reshape(1, 3).expand(4, 3), 1, -3)), x, s)
    _check(lambda T, x, s: (T.diagonal_scatter(x, s[:4]), x.diagonal_scatter(s[:4], 1),
                            T.diagonal_scatter(x, s[:2], -2)), x, s)
    _check(lambda T, x, s: T.diagonal_scatter(x.reshape(2, 3, 4), s.reshape(3, 2), 0, 0,
                                              2), x, s)
    _raises(lambda T, x, s: T.select_scatter(x, s[:3], 0, 1), x, s)
    _raises(lambda T, x, s: T.select_scatter(x, s, 0, 4), x, s)
    _raises(lambda T, x, s: T.slice_scatter(x, s[:3].reshape(1, 3).expand(4, 3), 1, 0, 2), x, s)
    _raises(lambda T, x, s: T.diagonal_scatter(x, s[:3]), x, s)


def test_put():
    x, v = _data(4, 6), _data(3)
    idx = np.array([0, -1, 7])
    _check(lambda T, x, v, i: (x.put(i, v), x.put(i, v, accumulate=True),
                               T.put(x, i[:2], v[:2])), x, v, idx)

    def inplace(T, x, v, i):
        y = x * 1
        ver = y._version
        y.put_(i, v, accumulate=True)
        assert y._version == ver + 1
        return y
    _check(inplace, x, v, idx)
    _raises(lambda T, x, v: x.put(T.tensor([0, 30, 1]), v), x, v)
    _raises(lambda T, x, v: x.put(T.tensor([0, 1]), v), x, v)
    _raises(lambda T, x, v: x.put(T.tensor([0., 1, 2]), v), x, v)
    _raises(lambda T, x, v: x.put(T.tensor([0, 1, 2]), v.float()), x, v)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(reduce, include_self):
    x, s = _data(4, 3), _data(5, 3)
    idx = np.array([0, 2, 0, 3, 2])
    _check(lambda T, x, s, i: x.index_reduce(0, i, s, reduce, include_self=include_self),
           x, s, idx)
    _check(lambda T, x, s, i: (x * 1).index_reduce_(1, i[:3] % 3, s[:4],
                                                    reduce, include_self=include_self),
           x, s, idx)


def test_index_reduce_errors():
    x, s = _data(4, 3), _data(2, 3)
    _raises(lambda T, x, s: x.index_reduce(0, T.tensor([0, 1]), s, "sum"), x, s)
    _raises(lambda T, x, s: x.index_reduce(0, T.tensor([0, 5]), s, "amax"), x, s)
    _raises(lambda T, x, s: x.index_reduce(0, T.tensor([0, 1]), s.float(), "amax"), x, s)


@pytest.mark.parametrize("shape,wrap", [((3, 4), False), ((4, 3), False), ((7, 3), True),
                                        ((7, 3), False), ((3, 3, 3), False), ((2, 5), True)])
def test_fill_diagonal_(shape, wrap):
    def fn(T, x):
        y = x * 1
        ver = y._version
        out = y.fill_diagonal_(2.5, wrap=wrap)
        assert out is y and y._version > ver
        return y
    _check(fn, _data(*shape))
    _raises(lambda T, x: x.fill_diagonal_(1.), _data(3))
    _raises(lambda T, x: x.fill_diagonal_(1.), _data(3, 4, 3))


# ---- in-place metadata ops ---------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda y: y.t_(), lambda y: y.transpose_(0, 1), lambda y: y.unsqueeze_(1),
    lambda y: y.unsqueeze_(-1), lambda y: y.unsqueeze_(0).squeeze_(),
    lambda y: y.unsqueeze_(0).squeeze_(0), lambda y: y.unsqueeze_(2).squeeze_((0, 2))])
def test_inplace_metadata(fn):
    w = _data(2, 3)

    def run(T, x):
        y = x * 1
        ver = y._version
        out = fn(y)
        assert out is y and y._version > ver and y._base is None
        return y * T.arange(y.numel(), dtype=T.float64).reshape(y.shape)
    ref, got = _check(run, w)
    # the strides are those of the view the op made
    y = torchish.tensor(w) * 1
    r = torch.tensor(w) * 1
    assert fn(y).stride() == fn(r).stride()


def test_inplace_metadata_on_view_and_aliases():
    w = _data(2, 3)

    def run(T, x):
        b = x * 1
        v = b[0]
        other = b.view(6)
        v.unsqueeze_(0)
        assert v._base is b
        b.t_()
        b.add_(1)
        return v, other, b
    ref, got = _check(run, w)
    r = torch.tensor(w) * 1
    g = torchish.tensor(w) * 1
    assert r.t_().stride() == g.t_().stride() and not g.is_contiguous()


@pytest.mark.parametrize("fn", [lambda T: T.zeros(2, 3, 4).t_(),
                                lambda T: T.zeros(2, 3).squeeze_(5),
                                lambda T: T.zeros(2, 3).transpose_(0, 4),
                                lambda T: T.zeros(2, 3).unsqueeze_(3),
                                lambda T: T.zeros(2, requires_grad=True).unsqueeze_(0)])
def test_inplace_metadata_errors(fn):
    with pytest.raises(Exception) as ref:
        fn(torch)
    with pytest.raises(type(ref.value), match=None) as got:
        fn(torchish)
    assert str(got.value) == str(ref.value)


def test_sum_to_size_and_same_size():
    x = _data(4, 6)
    for size in [(1, 6), (6,), (4, 1), (1, 1), (4, 6)]:
        _check(lambda T, x: (x * 1).sum_to_size(*size), x)
    _check(lambda T, x: (x * 1).sum_to_size((1, 6)), x)
    y = torchish.ones(2)
    assert y.sum_to_size(2) is y
    _raises(lambda T, x: x.sum_to_size(2, 4, 6), x)
    _raises(lambda T, x: x.sum_to_size(3, 6), x)
    for T in (torch, torchish):
        a = T.zeros(2, 3)
        assert T.is_same_size(a, T.ones(2, 3)) and not a.is_same_size(T.ones(3, 2))
    _raises(lambda T, x: T.is_same_size(x, 1), x)


@pytest.mark.skipif(torchish.cuda.is_available(), reason="pinning works where CUDA is")
def test_pinned_memory_on_cpu_build():
    for T in (torch, torchish):
        assert T.ones(2).is_pinned() is False
    _raises(lambda T, x: x.pin_memory(), _data(2))


# ---- statistics --------------------------------------------------------------------------

def test_cov_corrcoef():
    x = _data(3, 5)
    _check(lambda T, x: (T.cov(x), x.cov(correction=0), T.cov(x[0])), x)
    fw, aw = np.array([1, 2, 1, 3, 1]), np.abs(_data(5)) + 0.1
    _check(lambda T, x, f, a: (T.cov(x, fweights=f), T.cov(x, aweights=a),
                               T.cov(x, fweights=f, aweights=a, correction=2)), x, fw, aw)
    _check(lambda T, x: (T.corrcoef(x), x.corrcoef(), T.corrcoef(x[0])), x)
    _check(lambda T, a: T.cov(a.double()), np.array([[1, 2, 4], [0, 3, 3]]))
    _raises(lambda T, x: T.cov(x.reshape(1, 3, 5)), x)
    _raises(lambda T, x: T.cov(x, fweights=T.ones(5)), x)
    _raises(lambda T, x: T.cov(x, aweights=T.ones(5, dtype=T.int64)), x)


def test_histogram():
    x = _data(50)
    _check(lambda T, x: T.histogram(x, 7), x, grad=False)
    _check(lambda T, x: x.float().histogram(4, range=(-1., 1.), density=True), x, grad=False)
    w = np.abs(_data(50))
    _check(lambda T, x, w: T.histogram(x, 5, weight=w), x, w, grad=False)
    edges = np.array([-2., -0.5, 0., 0.3, 2.])
    _check(lambda T, x, e: T.histogram(x, e), x, edges, grad=False)
    _check(lambda T, x, e: T.histogram(x, e, density=True), x, edges, grad=False)
    _check(lambda T, x: T.histogram(x[:1] * 0 + 1, 4), x, grad=False)
    ref = torch.histogram(torch.tensor(x), 3)
    got = torchish.histogram(torchish.tensor(x), 3)
    assert type(got).__name__ == type(ref).__name__ == "histogram"
    assert got.hist is got[0]
    _raises(lambda T, a: T.histogram(a, 3), np.array([1, 2]))
    _raises(lambda T, x: T.histogram(x, 3, range=(1., 0.)), x)


@pytest.mark.parametrize("kwargs", [{}, {"spacing": 2.0}, {"dim": 1}, {"edge_order": 2},
                                    {"spacing": [0.5, 2.0]}, {"dim": (0,), "spacing": [3.0]}])
def test_gradient(kwargs):
    _check(lambda T, x: T.gradient(x, **kwargs), _data(4, 5))


def test_gradient_coordinates_and_errors():
    coords = np.cumsum(np.abs(_data(5)) + 0.1)
    _check(lambda T, x, c: T.gradient(x, spacing=(c,), dim=1), _data(3, 5), coords)
    _check(lambda T, x, c: T.gradient(x, spacing=(c,)), _data(5), coords)
    _raises(lambda T, x: T.gradient(x, edge_order=2), _data(2, 5))
    _raises(lambda T, x: T.gradient(x, spacing=[1., 2.], dim=0), _data(3, 5))


def test_renorm():
    x = _data(3, 4) * 3
    _check(lambda T, x: (T.renorm(x, 2, 0, 1.5), x.renorm(1, 1, 2.), x.renorm(3.5, -1, 0.5)),
           x)
    _check(lambda T, x: (x * 1).renorm_(2, 0, 1.), x)
    _raises(lambda T, x: T.renorm(x, 2, 0, -1), x)
    _raises(lambda T, x: T.renorm(x, -1, 0, 1), x)
    _raises(lambda T, a: T.renorm(a, 2, 0, 1), np.array([1., 2.]))


# ---- linalg ------------------------------------------------------------------------------

def test_inner():
    _check(lambda T, a, b: (T.inner(a, b), a.inner(b[0]), T.inner(a[0], b[0]),
                            T.inner(a, b[0, 0])), _data(2, 3), _data(4, 3))
    _raises(lambda T, a, b: T.inner(a, b), _data(2, 3), _data(4))


def test_logdet_slogdet_matrix_exp():
    a = _data(3, 3) + 3 * np.eye(3)
    _check(lambda T, a: (T.logdet(a), a.logdet()), a)
    _check(lambda T, a: (T.slogdet(a), a.slogdet(), T.linalg.slogdet(a)), a)
    _check(lambda T, a: (T.matrix_exp(a * 0.3), (a * 0.3).matrix_exp()), a)
    neg = np.array([[1., 2.], [3., 4.]])
    _check(lambda T, a: T.logdet(a), neg, grad=False)
    ref = torch.slogdet(torch.tensor(a))
    got = torchish.slogdet(torchish.tensor(a))
    assert repr(ref).split("(")[0] == repr(got).split("(")[0]
    assert type(torchish.linalg.slogdet(torchish.tensor(a))).__name__ == "linalg_slogdet"
    _raises(lambda T, a: T.logdet(a), np.array([[1, 2], [3, 4]]))
    _raises(lambda T, a: T.matrix_exp(a), _data(2, 3))


def test_chain_matmul_multi_dot():
    a, b, c = _data(2, 3), _data(3, 4), _data(4, 2)
    _check(lambda T, a, b, c: (T.chain_matmul(a, b, c), T.chain_matmul(a, b),
                               T.chain_matmul(a)), a, b, c)
    _check(lambda T, a, b, c: (T.linalg.multi_dot([a, b, c]),
                               T.linalg.multi_dot([a[0], b, c[:, 0]])), a, b, c)
    _raises(lambda T: T.chain_matmul())
    _raises(lambda T, a: T.chain_matmul(a, a[0]), a)


# ---- under jit ---------------------------------------------------------------------------

def test_ops_under_compile():
    x = torchish.tensor(_data(4, 6))

    def f(x):
        return (torchish.float_power(x, 2).sum() + torchish.inner(x, x).sum()
                + x.renorm(2, 0, 1.).sum() + torchish.select_scatter(x, x[0], 0, 1).sum()
                + torchish.cov(x).sum() + torchish.nextafter(x, x + 1).sum()
                + sum(p.sum() for p in torchish.hsplit(x, 2)))
    np.testing.assert_allclose(torchish.compile(f)(x).item(), f(x).item(), rtol=1e-10)


def test_math_constants_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("pi", "e", "inf", "nan", "newaxis"):
        a, b = getattr(torch, name), getattr(torchish, name)
        assert type(a) is type(b) and (a == b or a != a and b != b), name
    assert torchish.ones(3)[:, torchish.newaxis].shape == (3, 1)


def test_integer_pow_negative_exponents():
    # 1 / base**-e truncated: 0 except for the bases 1 and -1 (XLA's integer pow wraps)
    b, e = np.array([6, 6, 1, -1, -1, 0, 2, -2]), np.array([-8, -1, -3, -3, -2, -1, 0, -1])
    _check(lambda T, b, e: T.pow(b, e), b, e)
    _check(lambda T, e: 2 ** e, e)
    _raises(lambda T, x: x ** -1, np.array([2, 3]))


def test_to_positional_copy():
    x = torchish.ones(2, device="cpu")
    assert x.to(torchish.float32, False, True) is not x
    assert x.to("cpu", torchish.float32, False, True) is not x
    assert x.to("cpu", torchish.float32, False, False) is x


def test_cross_default_dims():
    a = np.random.default_rng(0).standard_normal((3, 3, 3))
    b = np.random.default_rng(1).standard_normal((3, 3, 3))
    _check(lambda T, a, b: T.linalg.cross(a, b), a, b)   # the last dimension
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(lambda T, a, b: T.cross(a, b), a, b)      # the first of size 3
        _raises(lambda T, a, b: T.cross(a, b), np.zeros((5, 2)), np.zeros((5, 2)))
    _raises(lambda T, a, b: T.linalg.cross(a, b), np.zeros((5, 3)), np.zeros((5, 1)))


# ---- kaiser_window ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("beta", [0.0, 0.5, 5.0, 12.0, 30.0, -3.0])
def test_kaiser_window(dtype, periodic, beta):
    tol = {"float32": 2e-5, "float64": 1e-12}.get(dtype, 1e-2)
    for n in (0, 1, 2, 3, 8, 17):   # each length compiles: the special 0 and 1, odd, even
        expected = torch.kaiser_window(n, periodic, beta, dtype=getattr(torch, dtype))
        got = torchish.kaiser_window(n, periodic, beta, dtype=getattr(torchish, dtype))
        assert str(got.dtype) == str(expected.dtype) and tuple(got.shape) == (n,)
        np.testing.assert_allclose(got.double().numpy(), expected.double().numpy(), rtol=tol,
                                   atol=1e-30)


def test_kaiser_window_defaults():
    for m in (torch, torchish):
        m.manual_seed(0)
    np.testing.assert_allclose(torchish.kaiser_window(7).numpy(),
                               torch.kaiser_window(7).numpy(), rtol=2e-5)
    np.testing.assert_allclose(torchish.kaiser_window(6, False, torchish.tensor(2.)).numpy(),
                               torch.kaiser_window(6, False, torch.tensor(2.)).numpy(), rtol=2e-5)
    w = torchish.kaiser_window(5, requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.dtype == torchish.float32


KAISER_ERRORS = [
    lambda t: t.kaiser_window(-1), lambda t: t.kaiser_window(-1, False),
    lambda t: t.kaiser_window(5, dtype=t.int64), lambda t: t.kaiser_window(-1, dtype=t.int32),
    lambda t: t.kaiser_window(0, dtype=t.uint8), lambda t: t.kaiser_window(5, dtype=t.bool),
    lambda t: t.kaiser_window(5.0), lambda t: t.kaiser_window(True),
    lambda t: t.kaiser_window(5, dtype=t.complex64), lambda t: t.hann_window(-2),
    lambda t: t.hann_window(4, dtype=t.int16),
]


@pytest.mark.parametrize("k", range(len(KAISER_ERRORS)))
def test_kaiser_window_errors(k):
    with pytest.raises(Exception) as expected:
        KAISER_ERRORS[k](torch)
    with pytest.raises(type(expected.value)) as actual:
        KAISER_ERRORS[k](torchish)
    assert str(actual.value) == str(expected.value)


# ---- regressions found by a deeper OpInfo pass (TORCHISH_OPINFO_SAMPLES=8) ----------------

@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast_nd_sequences(name):
    # one tensor -> a tensor; several tensors or a list/tuple of them -> a tuple
    shapes = [(2, 3, 4, 5), (3, 4, 5), (4, 5), (5,), ()]
    arrays = [_data(*s) for s in shapes]
    _check(lambda m, *ts: getattr(m, name)(list(ts)), *arrays)
    _check(lambda m, *ts: getattr(m, name)(*ts), *arrays)
    _check(lambda m, t: getattr(m, name)(t), arrays[-1])
    _check(lambda m, t: getattr(m, name)((t,)), arrays[3])
    assert getattr(torchish, name)() == getattr(torch, name)() == ()


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinate_spacing(edge_order):
    # uneven coordinates: the edge_order=2 ends use the non-uniform three-point formula
    coords = [np.cumsum(RNG.random(n) + 0.1) for n in (3, 4)]
    _check(lambda m, x, c0, c1: m.gradient(x, spacing=[c0, c1], dim=(0, 1),
                                          edge_order=edge_order),
           _data(3, 4, 5), *coords, rtol=1e-6, atol=1e-6)
    _check(lambda m, x, c: m.gradient(x, spacing=(c,), edge_order=edge_order),
           _data(6), np.array([0.0, 0.5, 0.7, 1.6, 2.0, 3.5]), rtol=1e-6, atol=1e-6)


def test_index_put_accumulate_bool():
    # accumulating into a bool tensor is a logical or (duplicate indices included)
    x = np.zeros((5, 5), bool)
    v = np.array([[1, 0, 1, 0, 0], [0, 0, 0, 0, 1]], bool)
    ref = torch.tensor(x).index_put((torch.tensor([1, 1]),), torch.tensor(v), accumulate=True)
    got = torchish.tensor(x).index_put((torchish.tensor([1, 1]),), torchish.tensor(v),
                                       accumulate=True)
    _same(ref, got)
    ref = torch.zeros(4, dtype=torch.bool).index_put_(
        (torch.tensor([2, 2, 0]),), torch.tensor([True, False, False]), accumulate=True)
    got = torchish.zeros(4, dtype=torchish.bool).index_put_(
        (torchish.tensor([2, 2, 0]),), torchish.tensor([True, False, False]), accumulate=True)
    _same(ref, got)


@pytest.mark.parametrize("name", ["gather", "scatter", "scatter_add", "scatter_reduce"])
def test_gather_scatter_empty_index_any_dtype(name):
    # an empty index is not dtype-checked; a non-empty uint8 one is refused
    def call(m, x, idx):
        if name == "gather":
            return m.gather(x, 0, idx)
        extra = ("sum",) if name == "scatter_reduce" else ()
        return getattr(m, name)(x, 0, idx, m.ones(idx.shape, dtype=x.dtype), *extra)
    for lib in (torch, torchish):
        out = call(lib, lib.ones(5, 2, dtype=lib.float64), lib.zeros(0, 2, dtype=lib.uint8))
        assert tuple(out.shape) == ((0, 2) if name == "gather" else (5, 2))
        # nor is its rank checked against the input's
        out = call(lib, lib.ones(5, dtype=lib.float64), lib.zeros(2, 0, 4, dtype=lib.int64))
        assert tuple(out.shape) == ((2, 0, 4) if name == "gather" else (5,))
    with pytest.raises(RuntimeError):
        call(torch, torch.ones(5), torch.tensor([1], dtype=torch.uint8))
    with pytest.raises(RuntimeError):
        call(torchish, torchish.ones(5), torchish.tensor([1], dtype=torchish.uint8))


@pytest.mark.parametrize("p", [0.5, -1, -0.5, 1, 1.5, 3])
@pytest.mark.parametrize("x", [[0.0, 1.0, -2.0, 0.0, 3.0], [0.0, 0.0, 0.0]])
def test_vector_norm_grad_at_zero_entries(p, x):
    # zero entries (and the zero vector) get gradient 0, also for p < 1 where |x|^(p-1) = inf
    _check(lambda m, t: m.linalg.vector_norm(t, p), np.array(x))
    _check(lambda m, t: m.linalg.norm(t, p), np.array(x))


@pytest.mark.parametrize("p", [0.5, 1, 1.5, 3])
def test_dist_cdist_grad_at_zero_differences(p):
    a = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 2.0]])
    b = np.array([[0.0, 1.0, 2.0], [3.0, 1.0, 0.0]])
    _check(lambda m, x, y: m.dist(x, y, p), a, b)
    _check(lambda m, x, y: m.cdist(x, y, p), a, b)


def test_cdist_batch_broadcast_error_names_batch_dims():
    # only the batch dims broadcast: the message compares them, not the row counts
    msgs = []
    for m in (torch, torchish):
        with pytest.raises(RuntimeError) as info:
            m.cdist(m.zeros(2, 3, 4), m.zeros(5, 6, 4))
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]
    assert tuple(torchish.cdist(torchish.zeros(2, 1, 3, 4), torchish.zeros(5, 6, 4)).shape) \
        == (2, 5, 3, 6)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
def test_solve_triangular_right(upper, unitriangular):
    # left=False solves X A = B
    A = _data(2, 3, 3) + 3 * np.eye(3)
    _check(lambda m, a, b: m.linalg.solve_triangular(a, b, upper=upper, left=False,
                                                     unitriangular=unitriangular),
           A, _data(2, 4, 3), rtol=1e-6, atol=1e-6)
    _check(lambda m, a, b: m.linalg.solve_triangular(a, b, upper=upper, left=False,
                                                     unitriangular=unitriangular),
           _data(1, 1), _data(3, 1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shapes", [((5, 5, 0), (0, 5)), ((2, 5, 0), (0,)), ((5, 0, 3), (3,)),
                                    ((0, 4, 3), (3, 2))])
def test_matmul_folded_empty(shapes):
    # the folded (batch*n x k) @ (k x m) path with a zero-sized dimension
    _check(lambda m, a, b: m.matmul(a, b), _data(*shapes[0]), _data(*shapes[1]))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_0d(name, dim):
    _check(lambda m, x: getattr(m, name)(x, dim), np.array(2.5))
    _check(lambda m, x: getattr(m.nn.functional, name)(x, dim, dtype=m.float64),
           np.array(2.5, np.float32), grad=False)
    _check(lambda m, x: m.nn.functional.softmin(x, dim), np.array(-1.5))
    for lib in (torch, torchish):
        with pytest.raises(IndexError):
            getattr(lib, name)(lib.tensor(1.0), 1)


def test_masked_scatter_broadcasts_self():
    # out of place, self broadcasts against the mask (grad_fn names differ: not compared)
    mask = np.array([[1, 0, 1, 0, 0]] * 3, bool)
    src = _data(5, 5)
    outs = []
    for lib in (torch, torchish):
        x = lib.tensor(np.arange(5.0), requires_grad=True)
        s = lib.tensor(src, requires_grad=True)
        out = x.masked_scatter(lib.tensor(mask), s)
        out.sum().backward()
        outs.append([_to_np(out), _to_np(x.grad), _to_np(s.grad)])
    for r, g in zip(*outs):
        np.testing.assert_allclose(g, r)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_quantile_0d_keepdim(name, keepdim):
    # a 0-d input has no dim to keep: the result stays 0-d (or q's shape)
    _check(lambda m, x: getattr(m, name)(x, 0.5, dim=0, keepdim=keepdim), np.array(1.5),
           grad=False)
    _check(lambda m, x, q: getattr(m, name)(x, q, dim=-1, keepdim=keepdim), np.array(1.5),
           np.array([0.2, 0.7]), grad=False)


def test_cosine_similarity_0d():
    _check(lambda m, a, b: m.nn.functional.cosine_similarity(a, b, dim=0), np.array(2.0),
           np.array(-3.0))
    _check(lambda m, a, b: m.nn.functional.cosine_similarity(a, b, dim=-1), np.array(2.0),
           _data(3))


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_reduction_empty_dim_list_grad_fn(name):
    # dim=() / [] is the dim-list overload (…Backward1), reducing everything
    for dim in ((), []):
        _check(lambda m, x: getattr(x, name)(dim), _data(3, 4))
    _check(lambda m, x: getattr(x, name)(), _data(3, 4))


def test_vector_matrix_matmul_grad_fn():
    # 1-d @ 2-d squeezes the mm result in place, as PyTorch (SqueezeBackward4)
    _check(lambda m, v, a: v @ a, _data(10), _data(10, 5))
    _check(lambda m, v, a: a.__rmatmul__(v), _data(10), _data(10, 5))


_OOB_CASES = [
    ("gather", lambda T, x, i: x.gather(1, i.reshape(1, -1))),
    ("scatter_", lambda T, x, i: x.clone().scatter_(1, i.reshape(1, -1), 1.0)),
    ("scatter_add_", lambda T, x, i: x.clone().scatter_add_(1, i.reshape(1, -1),
                                                           T.ones(1, 2, dtype=x.dtype))),
    ("scatter_reduce", lambda T, x, i: x.scatter_reduce(1, i.reshape(1, -1),
                                                       T.ones(1, 2, dtype=x.dtype), "amax")),
    ("take", lambda T, x, i: x.take(i * 3)),
    ("take_along_dim", lambda T, x, i: T.take_along_dim(x, i * 3)),
    ("index_add_", lambda T, x, i: x.clone().index_add_(1, i, T.ones(3, 2, dtype=x.dtype))),
    ("index_copy", lambda T, x, i: x.index_copy(0, i, T.ones(2, 4, dtype=x.dtype))),
    ("index_fill_", lambda T, x, i: x.clone().index_fill_(1, i, 2.0)),
    ("index_select0", lambda T, x, i: x.index_select(0, i)),
    ("index_select1", lambda T, x, i: x.index_select(1, i)),
    ("index_select3d", lambda T, x, i: x.reshape(3, 2, 2).index_select(2, i)),
    ("index_select1d", lambda T, x, i: x.reshape(-1).index_select(0, i * 3)),
]


@pytest.mark.parametrize("name,fn", _OOB_CASES, ids=[c[0] for c in _OOB_CASES])
@pytest.mark.parametrize("bad", [4, -1, -5])
def test_index_ops_bounds_errors(name, fn, bad):
    """Out-of-range indices raise PyTorch's error (type and message) where PyTorch checks
    them; JAX alone would clamp, wrap or read NaN. Negative ones are allowed only where
    PyTorch allows them (take, index_fill)."""
    x = _data(3, 4).astype(np.float32)
    outs = []
    for T in (torch, torchish):
        try:
            outs.append(("ok", _to_np(fn(T, T.tensor(x), T.tensor([0, bad])))))
        except Exception as e:  # noqa: BLE001 - compared below
            outs.append((type(e).__name__, str(e)))
    (kind_t, val_t), (kind_o, val_o) = outs
    assert kind_o == kind_t, (outs, name)
    if kind_t == "ok":
        np.testing.assert_allclose(val_o, val_t)
    else:
        assert val_o == val_t


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([3.0]).std(), lambda L: L.var(L.tensor([3.0])),
    lambda L: L.var_mean(L.tensor([3.0])), lambda L: L.std_mean(L.tensor([3.0]), 0),
    lambda L: L.tensor([3.0]).std(unbiased=False), lambda L: L.ones(2, 3).std(1, correction=3),
    lambda L: L.ones(2, 3).std(1, correction=2), lambda L: L.ones(3, 1).var(-1),
    lambda L: L.empty(0).var(), lambda L: L.ones(3, 0).var(0), lambda L: L.ones(2, 3).var((0, 1)),
])
def test_std_var_warn_without_degrees_of_freedom(call):
    # PyTorch warns when (reduced count - correction) <= 0, naming the user's line
    seen = []
    for lib in (torch, torchish):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            out = call(lib)
        seen.append([(str(w.message).split(" (Triggered")[0], w.filename) for w in ws])
        out = out[0] if isinstance(out, tuple) else out
        seen.append(np.asarray(out.numpy()).tolist().__repr__())
    assert seen[0] == seen[2] and seen[1] == seen[3]


@pytest.mark.parametrize("dtypes", [("float64", "float32"), ("float32", "float64"),
                                    ("int64", "int64"), ("float16", "float16")])
@pytest.mark.parametrize("name", ["polar", "complex"])
def test_polar_complex_check_dtypes(name, dtypes):
    # polar checks its inputs as complex does: same dtype, a floating one; no Half polar
    if name == "complex" and dtypes[0] == "float16":
        pytest.skip("complex32 (ComplexHalf) is not a torchish dtype")
    errs = []
    for lib in (torch, torchish):
        a, b = (lib.ones(2, dtype=getattr(lib, d)) for d in dtypes)
        with pytest.raises(Exception) as e:
            getattr(lib, name)(a, b)
        errs.append((type(e.value), str(e.value)))
    assert errs[0] == errs[1]


def test_complex_to_real_cast_warns_once_and_keeps_real_part():
    from torchish._ops import conversion
    z = np.array([1 + 2j, -3.5 - 1j], np.complex64)
    ref = torch.tensor(z).to(torch.float32).numpy()
    conversion._complex_to_real_warned[0] = False
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        a = torchish.tensor(z).to(torchish.float32)   # warns, naming this line
        b = torchish.tensor(z).float()               # once per process, as PyTorch
        c = torchish.zeros(2).copy_(torchish.tensor(z))
    assert [(w.category, str(w.message), w.filename) for w in ws] == [
        (UserWarning, "Casting complex values to real discards the imaginary part", __file__)]
    for t in (a, b, c):
        assert t.dtype is torchish.float32
        np.testing.assert_array_equal(t.numpy(), ref)


def _graph(fn, depth=7):
    if fn is None or depth == 0:
        return "None" if fn is None else "..."
    kids = ",".join(_graph(f[0], depth - 1) for f in fn.next_functions)
    return fn.name() + ("(" + kids + ")" if kids else "")


_MATMUL_CASES = {
    "3d@2d": ((2, 3, 4), (4, 5), ""), "3d@2d_nograd_w": ((2, 3, 4), (4, 5), "b"),
    "3dT@2d": ((3, 2, 4), (4, 5), "t"), "3d@1d": ((2, 3, 4), (4,), ""),
    "1d@3d": ((4,), (2, 4, 5), ""), "2d@3d": ((3, 4), (2, 4, 5), ""),
    "2d_nograd@3d": ((3, 4), (2, 4, 5), "a"), "3d@3d": ((2, 3, 4), (2, 4, 5), ""),
    "3d@3d_batch1": ((1, 3, 4), (2, 4, 5), ""), "4d@3d": ((2, 2, 3, 4), (2, 4, 5), ""),
    "4d@1d": ((2, 2, 3, 4), (4,), ""), "qk": ((2, 2, 5, 4), (2, 2, 5, 4), "k"),
    "empty": ((0, 3, 4), (4, 5), ""),
}


@pytest.mark.parametrize("case", list(_MATMUL_CASES))
def test_matmul_records_pytorchs_graph(case):
    # matmul of >2-D operands records PyTorch's steps: fold into mm / mv, or expand + bmm,
    # then _unsafe_view (the graph of nn.Linear on a sequence, of q @ k.transpose(-2, -1))
    sa, sb, flags = _MATMUL_CASES[case]
    a0, b0 = _data(*sa), _data(*sb)
    facts = []
    for lib in (torch, torchish):
        a = lib.tensor(a0, requires_grad="a" not in flags)
        b = lib.tensor(b0, requires_grad="b" not in flags)
        x = a.transpose(0, 1) if "t" in flags else a
        y = b.transpose(-2, -1) if "k" in flags else b
        out = x @ y
        out.pow(2).sum().backward()
        grads = [None if t.grad is None else t.grad.numpy() for t in (a, b)]
        facts.append((_graph(out.grad_fn), tuple(out.shape), out.stride(), out.detach().numpy(),
                      grads))
    ref, got = facts
    assert got[:3] == ref[:3]
    np.testing.assert_allclose(got[3], ref[3], rtol=1e-12, atol=1e-12)
    for r, g in zip(ref[4], got[4]):
        assert (r is None) == (g is None)
        if r is not None:
            np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)


def test_matmul_fold_size_error_is_mms():
    # (3, 4) @ (2, 5, 6) with a gradient folds through other.mT: mm's error, not bmm's
    errs = []
    for lib in (torch, torchish):
        a = lib.zeros(3, 4, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            a @ lib.zeros(2, 5, 6)
        errs.append(str(e.value))
    assert errs[0] == errs[1]


@pytest.mark.parametrize("make", [
    lambda t: t.reshape(4, 3), lambda t: t[:, ::2].reshape(-1), lambda t: t.t().reshape(4, 3),
    lambda t: t.t().reshape(-1), lambda t: t.t().flatten(), lambda t: t.expand(2, 3, 4).reshape(6, 4),
    lambda t: t[1:].reshape(-1),
])
def test_reshape_records_view_alias_or_clone(make):
    # reshape: ViewBackward0 when contiguous, ReshapeAliasBackward0 when strided but viewable,
    # else CloneBackward0 then UnsafeViewBackward0
    got = []
    for lib in (torch, torchish):
        x = lib.tensor(_data(3, 4), requires_grad=True)
        y = make(x)
        got.append((_graph(y.grad_fn, 3), y._base is not None, y.shape, y.stride()))
    assert got[0] == got[1]


@pytest.mark.parametrize("source", ["float32", "float64", "float16", "bfloat16"])
def test_float_to_integer_casts_wrap_as_pytorchs(source):
    """Out-of-range floats and NaN convert as PyTorch's CPU kernels do (x86 truncation to
    int32/int64, then the low bits for 8- and 16-bit types), not saturated."""
    values = [-1.5, 300.7, 255.9, -129.3, 70000.2, 3e9, -3e9, float("nan"), float("inf")]
    got = []
    for L in (torch, torchish):
        x = L.tensor(values).to(getattr(L, source))
        got.append([x.to(getattr(L, d)).tolist()
                    for d in ("uint8", "int8", "int16", "int32", "int64")])
    assert got[0] == got[1]


_T_WARNINGS = """
import sys, warnings
T = __import__(sys.argv[1])
counts = []
for shape in [(2, 3), (3,), (2, 3, 4), ()]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        T.ones(shape).T
        T.ones(shape).T
    counts.append([str(x.message)[:40] for x in w])
print(counts)
"""


def test_transpose_property_warns_once_off_matrices(tmp_path, monkeypatch, capsys):
    # PyTorch's `x.T` deprecation is a TORCH_WARN_ONCE for any tensor but a matrix (0-D and
    # 1-D included): the once-per-process state starts clean
    ours, theirs = stdout_of_both(_T_WARNINGS, tmp_path, monkeypatch, capsys)
    assert ours == theirs
    assert "The use of `x.T` on tensors" in theirs
