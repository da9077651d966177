"""Laid-out results (a pointwise op on a transposed or channels_last operand, a clone of a
transposed tensor) against PyTorch where their memory order shows: `as_strided`, storages,
NumPy, writes through other views, saved values re-read at backward, deepcopy. Their
memory-order array is made only when one of these needs it (`_storage.LaidOutStorage`)."""
import copy
import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

R = np.random.RandomState(0)
M = R.randn(3, 4).astype(np.float32)
A4 = R.randn(2, 3, 2, 2).astype(np.float32)


def _t(lib):   # a result whose strides are (1, 4): its memory holds M * 2 row by row
    return lib.tensor(M).t() * 2


def _cl(lib):
    return lib.tensor(A4).contiguous(memory_format=lib.channels_last) + 1


def _both(fn):
    got, want = fn(torchish), fn(torch)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)


MEMORY = {
    "as_strided": lambda L: _t(L).as_strided((12,), (1,)).tolist(),
    "as_strided_offset": lambda L: _cl(L).as_strided((2, 5), (7, 2), 1).tolist(),
    "typed_storage": lambda L: _cl(L).storage().tolist(),
    "untyped_bytes": lambda L: _t(L).untyped_storage().tolist(),
    "view_of_view": lambda L: _t(L).t().reshape(-1).tolist(),
    "select_read": lambda L: _cl(L)[1, :, 0].tolist(),
    "clone_of_transposed": lambda L: L.tensor(M).t().clone().as_strided((12,), (1,)).tolist(),
}


@pytest.mark.parametrize("name", sorted(MEMORY))
def test_memory_order_shows_as_pytorch(name):
    _both(MEMORY[name])


def _written_whole(L):
    y = _t(L)
    y.add_(1)
    y.mul_(y)
    return [y.tolist(), y.as_strided((12,), (1,)).tolist(), list(y.stride())]


def _written_through_views(L):
    y = _t(L)
    a, b = y.t(), y[1]
    a[0, 1] = 50.0          # through a permuting view
    b.fill_(-1.0)           # through a select
    y.as_strided((2,), (1,), 5).zero_()   # through memory
    return [y.tolist(), a.tolist(), b.tolist(), y.as_strided((12,), (1,)).tolist()]


def _written_then_viewed(L):
    x = L.tensor(A4).contiguous(memory_format=L.channels_last)
    y = x.exp()
    y.sub_(1)
    z = y.permute(0, 2, 3, 1)       # contiguous over y's memory
    return [z.reshape(-1).tolist(), y.sum().item(), list(z.stride())]


def _numpy_shares(L):
    y = _t(L)
    n = y.numpy()
    n[0, 0] = 7.0
    y[1, 2] = 9.0
    return [y.tolist(), n.tolist(), [s // 4 for s in n.strides]]


def _other_writers(L):
    out, dt, idx, st, res = _t(L), _t(L).view(L.int32), _t(L), _t(L), _t(L)
    L.add(L.ones(4, 3), 1, out=out)
    dt.add_(1)
    idx[L.tensor([0, 2]), 1] = 7.0
    z = L.empty(0).set_(st.untyped_storage(), 1, (2, 3), (3, 1))
    z.mul_(-1)
    res.resize_(2, 2)
    return [t.as_strided((6,), (1,)).tolist() for t in (out, idx, st)] + [
        dt.as_strided((4,), (1,)).tolist(), z.tolist(), res.tolist(), list(out.stride())]


@pytest.mark.parametrize("fn", [_written_whole, _written_through_views, _written_then_viewed,
                                _numpy_shares, _other_writers])
def test_writes_as_pytorch(fn):
    got, want = fn(torchish), fn(torch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64),
                                   np.asarray(w, dtype=np.float64), rtol=1e-5)


def _gradients(L):
    x = L.tensor(M, requires_grad=True)
    y = x.t().exp()                 # saves its (laid-out) result
    z = (y * L.tensor(M.T)).sigmoid()   # saves its (laid-out) result and y
    y.data.mul_(2)                  # unversioned: seen when backward reads y again
    z.sum().backward()
    return [x.grad.tolist(), type(y.grad_fn).__name__, type(z.grad_fn).__name__]


def test_saved_values_of_laid_out_results():
    got, want = _gradients(torchish), _gradients(torch)
    assert got[1:] == want[1:]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)


def _written_output(L, compiled=False):
    x = L.tensor(M[:, :3], requires_grad=True)
    y = x.t().exp()                 # a square laid-out result its backward reads
    if compiled:   # reads y (its storage swapped for the trace and back): not a write
        f = L.compile(lambda a: a * y)
        f(L.ones(3, 3))
        f(L.ones(3, 3))
    else:
        y.data.t()[0, 1] = 5.0      # an unversioned write through another view
    (y * L.tensor(M[:, :3])).sum().backward()
    return x.grad.tolist()


@pytest.mark.parametrize("compiled", [False, True])
def test_saved_output_read_back_through_its_layout(compiled):
    want = _written_output(torch, False) if not compiled else \
        (torch.tensor(M[:, :3]).t().exp() * torch.tensor(M[:, :3])).t().tolist()
    np.testing.assert_allclose(_written_output(torchish, compiled), want, rtol=1e-5)


def test_saved_files_hold_memory_order():
    def fn(L, load):
        buf = io.BytesIO()
        y = _cl(L)
        L.save([y, y[:, 1]], buf)
        buf.seek(0)
        a, b = load.load(buf)
        return [a.tolist(), list(a.stride()), list(b.stride()), b.storage_offset(),
                a.untyped_storage().nbytes()]
    want = fn(torch, torch)
    for got in (fn(torchish, torch), fn(torchish, torchish)):
        assert got[1:] == want[1:]
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)


def test_deepcopy_keeps_aliases():
    def fn(L):
        y = _t(L)
        v = y.t()
        y2, v2 = copy.deepcopy([y, v])
        v2[0, 0] = 100.0
        return [y2.tolist(), list(y2.stride()), y2.untyped_storage().data_ptr() ==
                v2.untyped_storage().data_ptr()]
    got, want = fn(torchish), fn(torch)
    assert got[1:] == want[1:]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)


def test_results_stay_in_value_order_until_memory_is_read():
    y, want = _t(torchish), _t(torch)
    z, want_z = (y + 1).exp() * y, (want + 1).exp() * want
    y.add_(1)
    want.add_(1)
    assert z.stride() == want_z.stride() and y.is_contiguous() == want.is_contiguous()
    np.testing.assert_allclose(z.tolist(), want_z.tolist(), rtol=1e-5)
    assert y._storage._physical is None and z._storage._physical is None
    assert y.as_strided((3,), (1,)).tolist() == want.as_strided((3,), (1,)).tolist()
    assert y._storage._physical is not None
