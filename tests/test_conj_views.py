"""Lazy conjugation and negation (`conj`, `_conj`, `_neg_view`: views carrying PyTorch's
conjugate / negative bit) compared with real PyTorch: values, `is_conj` / `is_neg`, `_is_view`,
`_base`, shared `_version`, writes through the view and through its base, grad_fn chains and
gradients, errors, and the same programs inside torchish.compile."""
import copy
import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402
from differential import raises_same, same_printed  # noqa: E402

ZDATA = (np.arange(12).reshape(3, 4) + 1j * (np.arange(12).reshape(3, 4)[::-1] - 5))
ZDATA = ZDATA.astype(np.complex64)
XDATA = np.arange(8, dtype=np.float32).reshape(4, 2) - 3


def make_z(T, requires_grad=False):
    return T.tensor(ZDATA, requires_grad=requires_grad)


def make_x(T):
    return T.tensor(XDATA)


def values(t):
    """A tensor's value as NumPy (its bits resolved, as PyTorch's numpy() needs)."""
    return np.asarray(t.detach().resolve_conj().resolve_neg().tolist())


def facts(t, base=None):
    return (tuple(t.shape), str(t.dtype), t.is_conj(), t.is_neg(), t._is_view(),
            base is not None and t._base is base, t._version)


def assert_same(ours, theirs):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, torchish.Tensor)
        np.testing.assert_allclose(values(ours), values(theirs), rtol=1e-6, atol=1e-6)
        assert facts(ours) == facts(theirs)
    elif isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
    else:
        assert ours == theirs


def chain(fn):
    """grad_fn names along the first edges, down to the leaf."""
    names = []
    while fn is not None:
        names.append(fn.name())
        nxt = fn.next_functions
        fn = nxt[0][0] if nxt else None
    return names


# ---- the views: values, bits, aliasing -------------------------------------------------------

VIEWS = {
    "conj": lambda T, z: z.conj(),
    "torch.conj": lambda T, z: T.conj(z),
    "_conj": lambda T, z: z._conj(),
    "torch._conj": lambda T, z: T._conj(z),
    "conj_conj": lambda T, z: z.conj().conj(),
    "conj_slice": lambda T, z: z.conj()[1:],
    "slice_conj": lambda T, z: z[1:, ::2].conj(),
    "conj_select": lambda T, z: z.conj()[2],
    "conj_t": lambda T, z: z.conj().t(),
    "t_conj": lambda T, z: z.t().conj(),
    "mH": lambda T, z: z.mH,
    "adjoint": lambda T, z: z.adjoint(),
    "H": lambda T, z: z.H,
    "conj_view": lambda T, z: z.conj().view(4, 3),
    "conj_reshape": lambda T, z: z.conj().reshape(12),
    "conj_unsqueeze": lambda T, z: z.conj().unsqueeze(0),
    "conj_expand": lambda T, z: z.conj().expand(2, 3, 4),
    "conj_as_strided": lambda T, z: z.conj().as_strided((2, 2), (1, 4), 1),
    "conj_diagonal": lambda T, z: z.conj().diagonal(),
    "conj_detach": lambda T, z: z.conj().detach(),
    "conj_data": lambda T, z: z.conj().data,
    "neg_view": lambda T, z: T._neg_view(z),
    "neg_view_method": lambda T, z: z._neg_view(),
    "neg_conj": lambda T, z: T._neg_view(z).conj(),
    "neg_neg": lambda T, z: T._neg_view(T._neg_view(z)),
    "conj_real": lambda T, z: z.conj().real,
    "conj_imag": lambda T, z: z.conj().imag,
    "conj_imag_slice": lambda T, z: z.conj()[:, 1:].imag,
    "torch_imag_conj": lambda T, z: T.imag(T.conj(z)),
    "real": lambda T, z: z.real,
    "imag": lambda T, z: z.imag,
    "neg_view_as_real": lambda T, z: T.view_as_real(T._neg_view(z)),
    "neg_real_view_as_complex": lambda T, z: T.view_as_complex(T._neg_view(T.view_as_real(z))),
    "view_as_complex_conj": lambda T, z: T.view_as_complex(T.view_as_real(z)).conj(),
    "conj_resolve": lambda T, z: z.conj().resolve_conj(),
    "torch_resolve_conj": lambda T, z: T.resolve_conj(z.conj()),
    "neg_resolve": lambda T, z: T._neg_view(z).resolve_neg(),
    "neg_conj_resolve_conj": lambda T, z: T._neg_view(z).conj().resolve_conj(),
    "neg_conj_resolve_neg": lambda T, z: T._neg_view(z).conj().resolve_neg(),
    "conj_clone": lambda T, z: z.conj().clone(),
    "conj_contiguous": lambda T, z: z.conj().contiguous(),
    "conj_plus": lambda T, z: z.conj() + 0,
    "conj_physical": lambda T, z: z.conj_physical(),
    "conj_physical_of_conj": lambda T, z: T.conj_physical(z.conj()),
    "conj_sum": lambda T, z: z.conj().sum(0),
    "conj_matmul": lambda T, z: z.conj() @ z.t(),
    "imag_conj_neg": lambda T, z: z.conj().imag.neg(),
    "imag_conj_clone": lambda T, z: z.conj().imag.clone(),
    "conj_to": lambda T, z: z.conj().to(T.complex128),
    "conj_copy_into": lambda T, z: T.zeros(3, 4, dtype=T.complex64).copy_(z.conj()),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_match_torch(name):
    make = VIEWS[name]
    z, tz = make_z(torchish), make_z(torch)
    v, tv = make(torchish, z), make(torch, tz)
    np.testing.assert_array_equal(values(v), values(tv))
    assert facts(v, z) == facts(tv, tz)
    assert (v is z) == (tv is tz)
    assert v.stride() == tv.stride() and v.storage_offset() == tv.storage_offset()


def test_real_tensors_return_themselves():
    for T in (torch, torchish):
        x = make_x(T)
        assert x.conj() is x and T.conj(x) is x and x.resolve_conj() is x
        assert x.resolve_neg() is x and x.conj_physical() is x
        z = make_z(T)
        assert z.resolve_conj() is z and z.resolve_neg() is z
        assert not T.is_conj(x) and not T.is_neg(x)
    v, tv = torchish._neg_view(make_x(torchish)), torch._neg_view(make_x(torch))
    np.testing.assert_array_equal(values(v), values(tv))
    assert facts(v) == facts(tv)


def test_repr_shows_values():
    for make in (lambda T, z: z.conj(), lambda T, z: z.conj().imag,
                 lambda T, z: T._neg_view(z)[1]):
        assert repr(make(torchish, make_z(torchish))) == repr(make(torch, make_z(torch)))


def test_no_conj_inplace_method():
    assert hasattr(torchish.Tensor, "conj_") == hasattr(torch.Tensor, "conj_")


# ---- writes through the view and through the base ---------------------------------------------

WRITES = {
    "add": (lambda T, z: z.conj(), lambda T, v: v.add_(1)),
    "mul_i": (lambda T, z: z.conj(), lambda T, v: v.mul_(1j)),
    "fill": (lambda T, z: z.conj(), lambda T, v: v.fill_(1 + 2j)),
    "copy": (lambda T, z: z.conj(), lambda T, v: v.copy_(T.ones(3, 4) * (2 - 1j))),
    "zero": (lambda T, z: z.conj()[1], lambda T, v: v.zero_()),
    "slice_add": (lambda T, z: z.conj()[1:, 2:], lambda T, v: v.add_(1 + 1j)),
    "t_sub": (lambda T, z: z.t().conj(), lambda T, v: v.sub_(T.arange(3) * 1j)),
    "setitem": (lambda T, z: z.conj(), lambda T, v: v.__setitem__(0, 5 + 5j)),
    "conj_physical_": (lambda T, z: z.conj(), lambda T, v: v.conj_physical_()),
    "imag_add": (lambda T, z: z.conj().imag, lambda T, v: v.add_(10)),
    "real_mul": (lambda T, z: z.conj().real, lambda T, v: v.mul_(2)),
    "neg_add": (lambda T, z: T._neg_view(z), lambda T, v: v.add_(1 + 1j)),
    "neg_imag_setitem": (lambda T, z: T._neg_view(z).conj().imag,
                         lambda T, v: v.__setitem__((0, 0), 7)),
    "as_strided": (lambda T, z: z.conj().as_strided((2, 2), (1, 4), 1),
                   lambda T, v: v.mul_(2j)),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_writes_through_view(name):
    make, write = WRITES[name]
    got = []
    for T in (torch, torchish):
        z = make_z(T)
        v = make(T, z)
        other = z.conj()   # another alias sees it too
        write(T, v)
        got.append((values(z), values(v), values(other), z._version, v._version,
                    other._version, v.is_conj(), v.is_neg()))
    for a, b in zip(got[0], got[1]):
        np.testing.assert_array_equal(np.asarray(b), np.asarray(a))


def test_writes_to_base_seen_through_view():
    got = []
    for T in (torch, torchish):
        z = make_z(T)
        c, im = z.conj(), z.conj().imag
        z.mul_(1 + 1j)
        z[0, 0] = 3 - 3j
        got.append((values(c), values(im), c._version, im._version))
    for a, b in zip(got[0], got[1]):
        np.testing.assert_array_equal(np.asarray(b), np.asarray(a))


def _out_into_conj(T):
    z = make_z(T)
    c = z.conj()
    T.add(T.ones(3, 4, dtype=T.complex64), 1j, out=c)
    return z, c._version


def _masked_fill(T):
    z = make_z(T)
    z.conj()[1:].masked_fill_(T.arange(4) % 2 == 0, 5j)
    return z


def _index_put(T):
    z = make_z(T)
    z.conj().index_put_((T.tensor([0, 2]), T.tensor([1, 0])), T.tensor([7j, 8j]))
    return z


def _split_views(T):
    c = make_z(T).conj()
    return [(v.is_conj(), v._is_view()) for v in c.unbind(0) + c.chunk(2, 1) + c.split(1)]


def _shape_views(T):
    c = make_z(T).conj()
    return [(v.is_conj(), v.tolist()) for v in (c.narrow(0, 1, 1), c.movedim(0, 1), c.flatten(),
                                                c.view_as(c), c.flip(0), c.unflatten(1, (2, 2)))]


def _no_grad_view(T):
    z = make_z(T, True)
    with T.no_grad():
        c = z.conj()
    return c.requires_grad, c.is_leaf, c.grad_fn, c.is_conj()


def _inference_view(T):
    with T.inference_mode():
        c = make_z(T).conj()
        c.add_(1)   # (whether it is a view there is not the subject: views in general)
        return c.is_conj(), c.is_inference(), c, c.imag.is_neg()


def _meta_view(T):
    c = T.empty(2, 3, dtype=T.complex64, device="meta").conj()
    return c.is_conj(), c.shape, c._is_view(), c.imag.is_neg()


def _joins(T):
    z = make_z(T)
    c = z.conj()
    return T.cat([c, z]), T.stack([c[0], z[0]]).is_conj(), T.equal(c, z.conj_physical()), \
        c[0, 1].item(), c.tolist()


def _laid_out(T):
    # a clone keeping a transposed input's strides is laid out over its own storage
    w = make_z(T).t().clone()
    c = w.conj()
    c[1:].add_(T.arange(3) * 1j)
    c.t()[0].mul_(2)
    return w, c, w.stride(), c.stride(), w._version, c.imag


def _dtype_view_bits(T):
    r = T.tensor(XDATA.repeat(3, 0)[:6])
    c = T.view_as_complex(r).conj()
    v = c.as_strided((2, 2), (1, 2), 1)
    v.mul_(1j)
    c.imag.add_(100)
    T._neg_view(r)[1:].sub_(1)
    return r, v.is_conj(), v._base is r, r._version, v


@pytest.mark.parametrize("prog", [_dtype_view_bits, _laid_out, _out_into_conj, _masked_fill, _index_put, _split_views,
                                  _shape_views, _no_grad_view, _inference_view, _meta_view,
                                  _joins])
def test_programs_print_as_torch(prog):
    same_printed(prog, torch)


# ---- errors ------------------------------------------------------------------------------------

ERRORS = {
    "view_as_real": lambda T: T.view_as_real(make_z(T).conj()),
    "view_as_real_slice": lambda T: T.view_as_real(make_z(T).conj()[1:]),
    "view_float": lambda T: make_z(T).conj().view(T.float32),
    "view_same_dtype": lambda T: make_z(T).conj().view(T.complex64),
    "neg_view_dtype": lambda T: T._neg_view(make_x(T)).view(T.int32),
    "numpy_conj": lambda T: make_z(T).conj().numpy(),
    "numpy_neg": lambda T: make_z(T).conj().imag.numpy(),
    "numpy_neg_real": lambda T: T._neg_view(make_x(T)).numpy(),
    "inplace_on_leaf_view": lambda T: make_z(T, True).conj().add_(1),
    "neg_bool_read": lambda T: T._neg_view(T.tensor([True, False])).tolist(),
    "is_conj_int": lambda T: T.is_conj(1),
    "resolve_neg_list": lambda T: T.resolve_neg([1.0]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    fn = ERRORS[name]
    raises_same(lambda: fn(torchish), lambda: fn(torch))


# ---- autograd ----------------------------------------------------------------------------------

GRADS = {
    "conj_mul": lambda T, z: (z.conj() * (z.detach() + 1j)).sum().abs(),
    "conj_imag": lambda T, z: (z.conj().imag ** 2).sum(),
    "conj_real": lambda T, z: (z.conj().real * 3).sum(),
    "neg_view": lambda T, z: T._neg_view(z).abs().sum(),
    "conj_slice": lambda T, z: (z.conj()[1:] * 2j).sum().abs(),
    "mH": lambda T, z: (z.mH @ z).abs().sum(),
    "resolve_conj": lambda T, z: (z.conj().resolve_conj() * 1j).sum().abs(),
    "conj_physical": lambda T, z: (T.conj_physical(z) * 1j).sum().abs(),
    "conj_conj": lambda T, z: z.conj().conj().abs().sum(),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grads_match_torch(name):
    fn = GRADS[name]
    z, tz = make_z(torchish, True), make_z(torch, True)
    out, tout = fn(torchish, z), fn(torch, tz)
    assert chain(out.grad_fn) == chain(tout.grad_fn)
    out.backward()
    tout.backward()
    # (PyTorch's ConjBackward0 hands a lazily conjugated gradient to `.grad`: its bit is not
    # compared, its value is)
    np.testing.assert_allclose(values(z.grad), values(tz.grad), rtol=1e-5, atol=1e-5)


CHAINS = {
    "conj": lambda T, z: z.conj(),
    "_conj": lambda T, z: T._conj(z),
    "conj_conj": lambda T, z: z.conj().conj(),
    "neg_view": lambda T, z: T._neg_view(z),
    "conj_imag": lambda T, z: z.conj().imag,
    "conj_real": lambda T, z: z.conj().real,
    "mH": lambda T, z: z.mH,
    "resolve_conj": lambda T, z: z.conj().resolve_conj(),
    "resolve_neg": lambda T, z: T._neg_view(z).resolve_neg(),
    "conj_physical": lambda T, z: z.conj().conj_physical(),
    "conj_of_leaf_resolve": lambda T, z: z.resolve_conj(),
}


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_grad_fn_chains(name):
    fn = CHAINS[name]
    z, tz = make_z(torchish, True), make_z(torch, True)
    v, tv = fn(torchish, z), fn(torch, tz)
    assert chain(v.grad_fn) == chain(tv.grad_fn)
    assert v.requires_grad == tv.requires_grad and facts(v, z) == facts(tv, tz)


def test_inplace_through_conj_view_grad():
    got = []
    for T in (torch, torchish):
        z = make_z(T, True)
        w = z.clone()
        v = w.conj()
        v.mul_(2 + 1j)
        v[1:].add_(1j)
        im = w.conj().imag
        im.mul_(3)
        loss = (w * (1 - 2j)).abs().sum()
        names = chain(w.grad_fn)
        loss.backward()
        got.append((names, values(w), values(z.grad), w._version, v._version))
    assert got[0][0] == got[1][0]
    for a, b in zip(got[0][1:], got[1][1:]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


_LOST = pytest.mark.xfail(reason="a dtype view's steps restart from its retyped storage "
                          "(_ops/shape.retype: ('dtype',) first), so the conj, _conj, neg and "
                          "t views before view_as_real are folded away and _ops/inplace."
                          "_replay_segments cannot emit their nodes (PyTorch replays e.g. "
                          "conj().imag as ConjBackward0, ConjBackward0, ViewAsRealBackward0, "
                          "NegViewBackward0, AsStridedBackward0; ours ViewAsReal, NegView, "
                          "AsStrided) and the neg bit _retyped carries over is replayed as a "
                          "node after the dtype view; needs a replay history on the View "
                          "(steps before the dtype view plus an array-level view_as_real "
                          "step), set by structure._retyped and read by inplace."
                          "refresh_view_grad_fn", strict=True)

REGENERATED = {
    "conj": lambda T, w: w.conj(),
    "neg_view": lambda T, w: T._neg_view(w),
    "neg_conj": lambda T, w: T._neg_view(w).conj(),
    "conj_conj": lambda T, w: w.conj().conj(),
    "conj_slice": lambda T, w: w.conj()[1:],
    "slice_conj": lambda T, w: w[1:].conj(),
    "conj_t_slice": lambda T, w: w.conj().t()[1:],
    "neg_real": lambda T, w: T._neg_view(w.real),
    "real": lambda T, w: w.real,
    "real_t": lambda T, w: w.real.t(),
    "view_as_real": lambda T, w: T.view_as_real(w),
    "view_as_real_select": lambda T, w: T.view_as_real(w)[0],
    "conj_imag": pytest.param(lambda T, w: w.conj().imag, marks=_LOST),
    "neg_imag": pytest.param(lambda T, w: T._neg_view(w).imag, marks=_LOST),
    "t_real": pytest.param(lambda T, w: w.t().real, marks=_LOST),
}


@pytest.mark.parametrize("make", REGENERATED.values(), ids=list(REGENERATED))
def test_regenerated_view_grad_fn_names(make):
    """A view's grad_fn after its base changes in place: PyTorch's replay, nodes for the conj,
    neg and dtype views, AsStridedBackward0 for the rest; then the same gradients."""
    got = []
    for T in (torch, torchish):
        z = make_z(T, True)
        w = z.clone()
        v = make(T, w)
        w.mul_(2)
        names = chain(v.grad_fn)
        (v * v.detach()).abs().sum().backward()
        got.append((names, values(z.grad)))
    assert got[1][0] == got[0][0]
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-5, atol=1e-5)


def test_regenerated_after_write_through_view():
    got = []
    for T in (torch, torchish):
        w = make_z(T, True).clone()
        v = w.conj()
        v.add_(1)
        u = T._neg_view(w)[1:]
        u.add_(1)
        got.append((chain(v.grad_fn), chain(u.grad_fn)))
    assert got[1] == got[0]


def test_forward_ad_values():
    tangent = (np.ones((3, 4)) * (0.5 - 2j)).astype(np.complex64)
    got = []
    for T in (torch, torchish):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(make_z(T), T.tensor(tangent))
            for f in (lambda d: d.conj(), lambda d: d.conj().imag, lambda d: T._neg_view(d),
                      lambda d: d.conj() * d):
                out = f(d)
                primal, tan = fw.unpack_dual(out)
                got.append((values(primal), values(tan), out.is_conj(), out.is_neg()))
    n = len(got) // 2
    for a, b in zip(got[:n], got[n:]):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


# ---- inside torchish.compile ---------------------------------------------------------------

def _prog_read(T, z):
    c = z.conj()
    return c * 2, c.imag + 1, T._neg_view(c)[1:].sum(), c.is_conj()


def _prog_write(T, z):
    c = z.conj()
    c.add_(1)
    im = c.imag
    im.mul_(2)
    T._neg_view(z)[0].add_(1j)
    return z.sum(), c.abs()


def _prog_grad(T, z):
    return ((z.conj() * z[0]).imag ** 2).sum() + T._neg_view(z).real.sum()


@pytest.mark.parametrize("prog", [_prog_read, _prog_write])
def test_compiled_matches_torch(prog):
    expected = prog(torch, make_z(torch))
    eager = prog(torchish, make_z(torchish))
    compiled = torchish.compile(lambda z: prog(torchish, z))(make_z(torchish))
    for got in (eager, compiled):
        for a, b in zip(got, expected):
            if isinstance(b, torch.Tensor):
                np.testing.assert_allclose(values(a), values(b), rtol=1e-6)
            else:
                assert a == b


def test_compiled_returns_conj_view_of_input():
    z = make_z(torchish)
    out = torchish.compile(lambda z: z.conj())(z)
    tz = make_z(torch)
    tout = tz.conj()
    np.testing.assert_array_equal(values(out), values(tout))
    assert out.is_conj()


COMPILED_VIEWS = {
    "conj": lambda T, z: z.conj(),
    "neg_view": lambda T, z: T._neg_view(z),
    "conj_slice": lambda T, z: z.conj()[1:],
    "neg_conj_t": lambda T, z: T._neg_view(z).conj().t(),
}


@pytest.mark.parametrize("name", sorted(COMPILED_VIEWS))
def test_compiled_conj_view_of_grad_input(name):
    """A compiled result viewing an input that needs grad through conj / neg steps is made
    again by those view ops: a view with the bits, PyTorch's grad_fn chain and gradients."""
    make = COMPILED_VIEWS[name]
    got = []
    for T, run in ((torch, lambda f, z: f(z)), (torchish, lambda f, z: torchish.compile(f)(z))):
        z = make_z(T, True)
        out = run(lambda z: make(T, z), z)
        facts_ = (out.is_conj(), out.is_neg(), out._is_view(), out._base is z, chain(out.grad_fn))
        (out * out.detach()).abs().sum().backward()
        got.append((facts_, values(out), values(z.grad)))
    assert got[1][0] == got[0][0]
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-6)
    np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-5, atol=1e-5)


def test_compiled_grad_matches_torch():
    tz = make_z(torch, True)
    _prog_grad(torch, tz).backward()
    z = make_z(torchish, True)
    torchish.compile(lambda z: _prog_grad(torchish, z))(z).backward()
    np.testing.assert_allclose(values(z.grad), values(tz.grad), rtol=1e-5)


# ---- copies, checkpoints ---------------------------------------------------------------------

def _round_trip(T, obj):
    buf = io.BytesIO()
    T.save(obj, buf)
    buf.seek(0)
    return T.load(buf)


SAVED = {
    "with_base": lambda T, z: [z, z.conj()],
    "before_base": lambda T, z: [z.conj(), z],
    "conj_imag": lambda T, z: [z.conj().imag],
    "neg_conj": lambda T, z: [T._neg_view(z).conj()],
    "conj_t_select": lambda T, z: [z.conj().t()[1]],
    "neg_real": lambda T, z: [T._neg_view(z.real)[1:]],
    "plain_pair": lambda T, z: [z.clone(), z],   # (each its own stride tuple in the pickle)
    "laid_out": lambda T, z: [z.t().clone().conj()[1:]],
    "view_as_complex_neg": lambda T, z: [T.view_as_complex(T._neg_view(T.view_as_real(z)))],
}


def _loaded_facts(t):
    return (values(t).tolist(), t.is_conj(), t.is_neg(), t._is_view(), t.stride(),
            t.storage_offset(), str(t.dtype))


@pytest.mark.parametrize("name", sorted(SAVED))
def test_save_load_keeps_bits(name):
    """The checkpoint holds the view's memory and its bits as metadata: byte-identical to
    torch.save's, loaded by either library with the bits set."""
    import zipfile
    from torchish import serialization as S
    make = SAVED[name]
    theirs = io.BytesIO()
    torch.save(make(torch, make_z(torch)), theirs)
    sid = zipfile.ZipFile(theirs).read("archive/.data/serialization_id").decode()
    ours = io.BytesIO()
    S.write_checkpoint(make(torchish, make_z(torchish)), ours, convert=S._make_converter(),
                       _serialization_id=sid)
    assert ours.getvalue() == theirs.getvalue()
    for T in (torch, torchish):
        ours.seek(0)
        theirs.seek(0)
        got, want = T.load(ours), torch.load(theirs)
        assert [_loaded_facts(t) for t in got] == [_loaded_facts(t) for t in want]


def test_loaded_bit_tensor_shares_storage():
    got = []
    for T in (torch, torchish):
        z = make_z(T)
        c, a = _round_trip(T, [z.conj(), z])
        c.imag.add_(1)   # (c's imag is a negative view: z's imaginary part goes down)
        got.append((values(a), values(c), c.is_conj(), a.is_conj()))
    for x, y in zip(got[0], got[1]):
        np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


COPIED = {
    "conj": lambda T, z: z.conj(),
    "neg_view": lambda T, z: T._neg_view(z),
    "conj_imag": lambda T, z: z.conj().imag,
    "neg_conj_t": lambda T, z: T._neg_view(z).conj().t(),
}


@pytest.mark.parametrize("name", sorted(COPIED))
def test_deepcopy_resolves_bits(name):
    got = []
    for T in (torch, torchish):
        z = make_z(T)
        d = copy.deepcopy(COPIED[name](T, z))
        a, b = copy.deepcopy([COPIED[name](T, z), z])   # (the storage copied once)
        got.append((values(d), d.is_conj(), d.is_neg(), d._is_view(), d._version, d.stride(),
                    values(a), a.is_conj(), a._version, b._version, values(b)))
    for x, y in zip(got[0], got[1]):
        np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


@pytest.mark.parametrize("name", sorted(COPIED))
def test_pickle_keeps_bits(name):
    import pickle
    got = []
    for T in (torch, torchish):
        p = pickle.loads(pickle.dumps(COPIED[name](T, make_z(T))))
        got.append((values(p), p.is_conj(), p.is_neg(), p._is_view(), p.imag.is_neg()
                    if p.is_complex() else None))
    for x, y in zip(got[0], got[1]):
        np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


def test_numpy_protocol_refuses_bits():
    for make in (lambda T: make_z(T).conj(), lambda T: T._neg_view(make_x(T))):
        raises_same(lambda: np.asarray(make(torchish)), lambda: np.asarray(make(torch)))


def test_set_bits_as_torch_load_sets_them():
    from torchish._ops.conj_views import set_bits
    z, tz = make_z(torchish), make_z(torch)
    t = set_bits(torchish.tensor(ZDATA), conj=True)
    tt = _round_trip(torch, tz.conj())
    np.testing.assert_array_equal(values(t), values(tt))
    assert (t.is_conj(), t._is_view()) == (tt.is_conj(), tt._is_view())
    assert values(t.imag).tolist() == values(tt.imag).tolist()
    del z
