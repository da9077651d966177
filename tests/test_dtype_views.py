"""Dtype-reinterpreting views (`view(dtype)`, `view_as_real`, `view_as_complex`) alias their
base as PyTorch's do: shared storage and version counter, writes seen on both sides, `_base`,
grad_fn names, gradients and error messages, compared with real PyTorch."""
import jax
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def T(a):
    return torchish.tensor(np.asarray(a))


def same(t, ref):
    ref = ref.detach().resolve_conj()
    assert tuple(t.shape) == tuple(ref.shape)
    assert str(t.dtype) == str(ref.dtype)
    if ref.dtype == torch.bfloat16:
        t, ref = t.float(), ref.float()
    np.testing.assert_array_equal(t.detach().numpy(), ref.numpy())


def both(fn, make):
    """fn on a torchish tensor and on a torch tensor made by `make(module)`."""
    return fn(torchish, make(torchish)), fn(torch, make(torch))


def complex_data(mod, shape=(3, 4)):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    return mod.tensor(a)


def real_data(mod, shape=(3, 4, 2), dtype=np.float32):
    a = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    return mod.tensor(a)


# ---- aliasing -------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    lambda m, c: m.view_as_real(c),
    lambda m, c: m.view_as_real(c[1:]),
    lambda m, c: m.view_as_real(c[:, 1:3]),
    lambda m, c: m.view_as_real(c.t()),
    lambda m, c: m.view_as_real(c[1]),
    lambda m, c: m.view_as_real(c).transpose(0, 1),
    lambda m, c: m.view_as_real(c)[..., 0],
    lambda m, c: m.view_as_real(c)[1:, :, 1],
    lambda m, c: m.view_as_real(c.t())[2],
    lambda m, c: m.view_as_complex(m.view_as_real(c)),
    lambda m, c: m.view_as_complex(m.view_as_real(c)[:, 1:]),
    lambda m, c: m.view_as_real(m.view_as_complex(m.view_as_real(c)))[..., 1],
])
def test_view_as_real_aliases(case):
    c, tc = complex_data(torchish), complex_data(torch)
    v, tv = case(torchish, c), case(torch, tc)
    same(v, tv)
    assert v.stride() == tv.stride() and v.storage_offset() == tv.storage_offset()
    assert (v._base is c) == (tv._base is tc)
    # a write through the view reaches the base, and one into the base reaches the view
    v.mul_(3)
    tv.mul_(3)
    same(c, tc)
    assert c._version == tc._version and v._version == tv._version
    c.add_(1)
    tc.add_(1)
    same(v, tv)


def test_view_as_real_setitem():
    c, tc = complex_data(torchish), complex_data(torch)
    torchish.view_as_real(c)[..., 0] = 5.
    torch.view_as_real(tc)[..., 0] = 5.
    same(c, tc)
    r, tr = torchish.view_as_real(c), torch.view_as_real(tc)
    r[0, 0] = -1.
    tr[0, 0] = -1.
    same(c, tc)
    assert r._base is c


def test_view_as_complex_aliases():
    x, tx = real_data(torchish), real_data(torch)
    z, tz = torchish.view_as_complex(x), torch.view_as_complex(tx)
    same(z, tz)
    assert z._base is x and z.stride() == tz.stride()
    z[1] = 2 + 3j
    tz[1] = 2 + 3j
    same(x, tx)
    x[0, 0, 1] = 9.
    tx[0, 0, 1] = 9.
    same(z, tz)
    zs, tzs = torchish.view_as_complex(x[1:, 2:]), torch.view_as_complex(tx[1:, 2:])
    same(zs, tzs)
    assert zs.storage_offset() == tzs.storage_offset() and zs.stride() == tzs.stride()


@pytest.mark.parametrize("src,dst", [
    ("float32", "int32"), ("float32", "float64"), ("float32", "int8"), ("float32", "int16"),
    ("float32", "complex64"), ("complex64", "float32"), ("complex64", "int16"),
    ("complex128", "float32"), ("float64", "complex128"), ("int64", "float32"),
    ("float16", "int16"), ("bfloat16", "float16"), ("uint8", "bool"), ("int32", "uint8"),
])
def test_view_dtype(src, dst):
    rng = np.random.default_rng(2)
    base = rng.integers(0, 50, (4, 8)).astype(np.float32)

    def make(m):
        return m.tensor(base).to(getattr(m, src))

    x, tx = make(torchish), make(torch)
    y, ty = x.view(getattr(torchish, dst)), tx.view(getattr(torch, dst))
    same(y, ty)
    assert y.stride() == ty.stride() and y._base is None and ty._base is None
    assert y.data_ptr() == y.data_ptr()
    if dst != "bool":
        y[0] = y[1]
        ty[0] = ty[1]
        same(x, tx)
        assert x._version == tx._version == y._version
    x[2] = x[3]
    tx[2] = tx[3]
    same(y, ty)


@pytest.mark.parametrize("case", [
    lambda m, x: x[:, 2:6].view(m.float64),
    lambda m, x: x[1:, 4:].view(m.complex64),
    lambda m, x: x.t().view(m.int32),
    lambda m, x: x[:, 1:].view(m.int8),
    lambda m, x: x.view(m.int16)[:, ::3],
    lambda m, x: x[::2].view(m.float64).view(m.int8),
    lambda m, x: x.unsqueeze(0).expand(2, 4, 8).view(m.int8),
    lambda m, x: m.view_as_real(x.view(m.complex64)),
    lambda m, x: m.view_as_real(x.view(m.complex64)).view(m.int32)[1:],
])
def test_view_dtype_chains(case):
    base = np.arange(32, dtype=np.float32).reshape(4, 8)
    x, tx = torchish.tensor(base), torch.tensor(base)
    y, ty = case(torchish, x), case(torch, tx)
    same(y, ty)
    assert y.stride() == ty.stride() and y.storage_offset() == ty.storage_offset()
    if 0 not in ty.stride():
        y.fill_(1)
        ty.fill_(1)
        same(x, tx)


@pytest.mark.parametrize("case", [
    lambda m: m.zeros(()).view(m.float64),
    lambda m: m.zeros(()).view(m.int16),
    lambda m: m.zeros(4, 6).t().view(m.float64),
    lambda m: m.zeros(4, 6).t().view(m.int16),
    lambda m: m.zeros(4, 6)[:, 1:].view(m.float64),
    lambda m: m.zeros(4, 6)[:, 1:5].view(m.float64),
    lambda m: m.zeros(4, 6)[:, 2:4].view(m.complex128),
    lambda m: m.zeros(4, 0).view(m.float64),
    lambda m: m.zeros(3, 6, dtype=m.float16).view(m.complex64),
    lambda m: m.view_as_real(m.zeros(3)),
    lambda m: m.view_as_complex(m.zeros(4, 6)),
    lambda m: m.view_as_complex(m.zeros(4, 6).t()[:, :2]),
    lambda m: m.view_as_complex(m.zeros(4, 3)[:, 1:]),
    lambda m: m.view_as_complex(m.zeros(())),
    lambda m: m.view_as_complex(m.zeros(3, 2, dtype=m.int32)),
    lambda m: m.view_as_complex(m.zeros(3, 4)[:, ::2]),
])
def test_errors(case):
    with pytest.raises(Exception) as ref:
        case(torch)
    with pytest.raises(type(ref.value)) as got:
        case(torchish)
    assert str(got.value) == str(ref.value)


# ---- autograd -------------------------------------------------------------------------------

def test_view_dtype_not_differentiable():
    for m in (torch, torchish):
        x = m.ones(4, requires_grad=True)
        for d in (m.float32, m.int32, m.float16, m.complex64):
            y = x.view(d)
            assert y.grad_fn is None and not y.requires_grad and y._base is None
        y = x.clone().view(m.int32)
        assert y.grad_fn is None and not y.requires_grad


def test_view_dtype_shares_version_with_grad():
    for m in (torch, torchish):
        x = m.ones(4, requires_grad=True)
        z = x * x
        x.view(m.float32).mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


def _grads(m, fn, make):
    leaf = make(m).requires_grad_()
    out = fn(m, leaf)
    w = real_data(m, tuple(out.shape), np.float32) if not out.is_complex() else \
        complex_data(m, tuple(out.shape))
    (out * w).real.sum().backward() if out.is_complex() else (out * w).sum().backward()
    return out, leaf.grad


@pytest.mark.parametrize("fn,make,name", [
    (lambda m, c: m.view_as_real(c * 2), complex_data, "ViewAsRealBackward0"),
    (lambda m, c: m.view_as_real(c.t()) * 2, complex_data, "ViewAsRealBackward0"),
    (lambda m, c: m.view_as_real(c)[..., 1], complex_data, "ViewAsRealBackward0"),
    (lambda m, x: m.view_as_complex(x * 1), real_data, "ViewAsComplexBackward0"),
    (lambda m, x: m.view_as_complex(x[1:]) * 3, real_data, "ViewAsComplexBackward0"),
])
def test_gradients(fn, make, name):
    out, g = _grads(torchish, fn, make)
    tout, tg = _grads(torch, fn, make)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-6, atol=1e-6)
    same(out, tout)
    leaf = make(torchish).requires_grad_()
    v = (torchish.view_as_real if name == "ViewAsRealBackward0" else
         torchish.view_as_complex)(leaf)
    assert type(v.grad_fn).__name__ == name
    assert v._base is leaf


def test_inplace_through_view_as_real_grad():
    def run(m):
        c = complex_data(m).requires_grad_()
        d = c * 1
        r = m.view_as_real(d)
        r.mul_(real_data(m, (3, 4, 2)))
        (m.view_as_real(d) ** 2).sum().backward()
        return d, c.grad, type(d.grad_fn).__name__
    d, g, name = run(torchish)
    td, tg, tname = run(torch)
    same(d, td)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-5, atol=1e-5)
    assert name == tname == "CopySlices"


def test_traced():
    from torchish._tensor import _wrap

    def f(a):  # the views' data are tracers here
        t = _wrap(a)
        r = torchish.view_as_real(t)
        r[..., 1] = r[..., 0] * 2
        i = t.view(torchish.float32)
        return t.jax(), i.jax()
    a = np.array([1 + 1j, 2 - 1j], np.complex64)
    out, flat = jax.jit(f)(a)
    np.testing.assert_array_equal(np.asarray(out), np.array([1 + 2j, 2 + 4j], np.complex64))
    np.testing.assert_array_equal(np.asarray(flat), np.array([1, 2, 2, 4], np.float32))


def test_grad_fn_after_the_base_changes_in_place():
    # PyTorch replays a lone dtype view (ViewAsRealBackward0); anything further is as_strided
    names = []
    for L in (torchish, torch):
        c = L.ones(3, dtype=L.complex64, requires_grad=True) * 1
        f = L.ones(3, 2, requires_grad=True) * 1
        views = [L.view_as_real(c), L.view_as_real(c)[0], L.view_as_real(c).t(),
                 L.view_as_complex(f), L.view_as_complex(f)[1:]]
        c.mul_(2)
        f.mul_(2)
        names.append([v.grad_fn.name() for v in views])
    assert names[0] == names[1]
