"""Storage-level methods: `as_strided` of a view (its size, stride and offset are the
storage's), `as_strided_` and `set_` (a tensor laid over another one's storage). Values,
layout, shared storage, version counters, grad_fn names, gradients and errors, compared with
PyTorch."""
import warnings

import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def _layout(t):
    return t.tolist(), tuple(t.shape), t.stride(), t.storage_offset(), t._version


def _error(fn):
    try:
        fn()
    except Exception as e:   # noqa: BLE001  (the type and message are compared)
        return type(e).__name__, str(e)
    return None


def _as_strided_of_views(L):
    b = L.arange(12.0)
    v = b[2:8].view(2, 3)
    given = v.as_strided((2, 2), (1, 3), 1)
    own = v.as_strided((2, 2), (1, 3))   # the default offset: the view's own
    of_t = L.as_strided(v.t(), (3,), (2,))
    w = b[1:].as_strided((2,), (2,))
    w.add_(10)
    return (_layout(given), given._base is b, _layout(own), _layout(of_t), b.tolist(),
            b._version, w._version)


def _as_strided_grads(L):
    x = L.arange(12.0, requires_grad=True)
    a = (x * 1)[2:8].view(2, 3).as_strided((3, 2), (1, 4), 0)   # reaches before the view
    names = (a.grad_fn.name(), a.grad_fn.next_functions[0][0].name())
    a.sum().backward()
    first = x.grad.tolist()
    x.grad = None
    a = (x * 1)[2:8].view(2, 3).t().as_strided((2, 2), (2, 1), 3)
    (a * L.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    return names, a.tolist(), first, x.grad.tolist()


def _write_through_as_strided_of_view(L):
    x = L.arange(8.0, requires_grad=True)
    y = x * 1
    v = y[2:6].view(2, 2).as_strided((3,), (2,), 1)
    v.mul_(L.tensor([1.0, 2.0, 3.0]))
    names = (v.grad_fn.name(), y.grad_fn.name())
    (y * L.arange(8.0)).sum().backward()
    return names, y.tolist(), x.grad.tolist(), v.tolist()


def _as_strided_in_place(L):
    x = L.arange(6.0, requires_grad=True)
    v = (x * 1)[1:]
    out = v.as_strided_((2,), (2,))
    seen = (out is v, _layout(v), v.grad_fn.name())
    v.sum().backward()
    grads = [x.grad.tolist()]
    x.grad = None
    y = x * 1
    y.as_strided_((2, 2), (1, 2), 1)
    (y * L.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    grads.append(x.grad.tolist())
    z = L.arange(6.0)
    L.as_strided_(z, (3,), (2,))
    z.add_(1)
    return seen, y.grad_fn.name(), _layout(y), grads, _layout(z), z.is_contiguous()


def _set_tensor(L):
    a, b = L.zeros(3), L.arange(6.0).view(2, 3)
    same = a.set_(b[1]) is a
    layout = (_layout(a), b._version, a._base is None,
              a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())
    a.add_(1)   # seen through b; a keeps its own version counter
    b.mul_(2)
    return same, layout, a.tolist(), b.tolist(), a._version, b._version


def _set_storage(L):
    b = L.arange(6.0).view(2, 3)
    d = L.zeros(1)
    d.set_(b.untyped_storage(), 1, (2, 2), (1, 2))
    first = _layout(d)
    d.zero_()
    e, f, g = L.zeros(1), L.zeros(1), L.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # TypedStorage is deprecated
        e.set_(b.storage(), 0, (2,))
    f.set_(b, 2, (2,), (3,))
    g.set_()
    h = L.zeros(1, dtype=L.int16)
    h.set_(b.untyped_storage())   # all of it, one dim of its own dtype
    return (first, b.tolist(), _layout(e), _layout(f), _layout(g),
            g.untyped_storage().nbytes(), tuple(h.shape), h._version)


def _set_autograd(L):
    x = L.zeros(2, requires_grad=True)
    y = x * 1
    y.set_(L.ones(3))
    node = (y.grad_fn.name(), y.requires_grad, _error(lambda: y.sum().backward()))
    with L.no_grad():
        x.set_(L.ones(4))
    return node, x.tolist(), x.requires_grad, x.is_leaf


def _errors(L):
    s = L.arange(6.0).untyped_storage()
    return [_error(f) for f in (
        lambda: L.arange(6.0).as_strided((2,), (-1,)),
        lambda: L.arange(6.0).as_strided((4,), (2,)),
        lambda: L.arange(6.0)[2:].as_strided((4,), (1,), 3),
        lambda: L.arange(6.0).as_strided((2,), (1,), -1),
        lambda: L.arange(6.0).as_strided((2, 2), (1,)),
        lambda: L.arange(6.0).view(L.int16)[1:].as_strided((12,), (1,), 1),
        lambda: L.arange(6.0).as_strided_((2,), (-1,)),
        lambda: L.arange(6.0, requires_grad=True).as_strided_((2,), (1,)),
        lambda: L.zeros(2).set_(L.zeros(2, dtype=L.int64)),
        lambda: L.zeros(2, requires_grad=True).set_(L.zeros(2)),
        lambda: L.zeros(1).set_(s, 0, (2,), (-1,)),
        lambda: L.zeros(1).set_(1),
    )]


@pytest.mark.parametrize("program", [
    _as_strided_of_views, _as_strided_grads, _write_through_as_strided_of_view,
    _as_strided_in_place, _set_tensor, _set_storage,
    _set_autograd, _errors])
def test_as_pytorch(program):
    assert program(torchish) == program(torch)


def _einsum_layouts(L):
    a, b = L.arange(24.0).view(2, 4, 3), L.arange(18.0).view(3, 6)
    c, d = L.arange(12.0).view(2, 2, 3), L.arange(24.0).view(2, 3, 4)
    out = []
    for r in (L.einsum("bld,dn->bnl", a, b), L.einsum("bld,dn->bldn", a, b),
              L.einsum("bij,bjk->kbi", c, d), L.einsum("bhqd,bhkd->bhqk", a[None], a[None])):
        out.append((r.tolist(), r.stride(), r.is_contiguous()))
    return out


def test_einsum_result_strides_as_pytorch():
    # PyTorch's permute + bmm steps leave some results permuted (a later .view() refuses)
    assert _einsum_layouts(torchish) == _einsum_layouts(torch)
