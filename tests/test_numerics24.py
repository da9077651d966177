"""Last-bit agreement with PyTorch's CPU kernels: complex128 `pow`'s shortcuts (c10's division
with gcc's FMA, glibc's csqrt/hypot) compared bit for bit with real PyTorch on fixed-seed
inputs; the general complex `pow` (glibc's cexp/clog, whose exp/log/sin/cos XLA does not
reproduce) with a tight tolerance; edge shapes and errors of the distance functions."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402
import torchish.nn.functional as G  # noqa: E402

F = torch.nn.functional


def _same_bits(ours, ref):
    ours, ref = np.atleast_1d(np.asarray(ours)), np.atleast_1d(np.asarray(ref))
    assert ours.dtype == ref.dtype and ours.shape == ref.shape, (ours.shape, ref.shape)
    if ours.dtype.kind == "c":   # (parts compared; a NaN's sign bit is not compared)
        ours, ref = ours.view(ours.real.dtype), ref.view(ref.real.dtype)
    both_nan = np.isnan(ours) & np.isnan(ref)
    bad = (ours.view(f"u{ours.itemsize}") != ref.view(f"u{ref.itemsize}")) & ~both_nan
    assert not bad.any(), f"{bad.sum()} of {ours.size} differ: {ours} vs {ref}"


def _complex(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.mark.parametrize("exp", [2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 1.0, 0.0])
def test_complex_pow_shortcuts_bits(exp):
    a = _complex((4, 500), 1)
    a[0, :3] = [1e-200 + 3e-200j, 1e200 - 2e199j, 4.0 + 0j]   # (hypot's scaled branches)
    _same_bits(torchish.pow(torchish.tensor(a), exp), torch.pow(torch.tensor(a), exp))


@pytest.mark.parametrize("exp", [2.5, 0.3, -1.7, 1.2 + 0.7j, -0.4 - 2j, 2 + 0j, "tensor"])
def test_complex_pow_general_close(exp):
    # glibc's cexp(y * clog(x)): XLA's float64 exp/log/sin/cos/atan2 are not glibc's, so
    # the last bit or two may differ
    a = _complex((3, 7, 5), 2)
    e = _complex((3, 7, 5), 3) if exp == "tensor" else exp
    ref = torch.pow(torch.tensor(a), torch.tensor(e) if exp == "tensor" else e).numpy()
    ours = torchish.pow(torchish.tensor(a), torchish.tensor(e) if exp == "tensor" else e)
    np.testing.assert_allclose(np.asarray(ours), ref, rtol=4e-16 * 8, atol=0)


def test_complex_pow_grad():
    a = _complex((3, 4), 4)
    for lib in (torch, torchish):
        x = lib.tensor(a, requires_grad=True)
        (x ** 2.5).abs().sum().backward()
        if lib is torch:
            ref = x.grad.numpy()
    np.testing.assert_allclose(np.asarray(x.grad), ref, rtol=1e-12)


@pytest.mark.parametrize("shape,dim", [((3, 0), 1), ((0, 4), 1), ((), 0), ((1, 1), 1), ((0,), 0)])
def test_edge_shapes(shape, dim):
    a = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    b = np.ones(shape, np.float32)
    for name in ("normalize", "cosine_similarity", "pairwise_distance"):
        args = (a,) if name == "normalize" else (a, b)
        kw = {} if name == "pairwise_distance" else {"dim": dim}
        try:
            ref = getattr(F, name)(*map(torch.tensor, args), **kw)
        except Exception as e:
            with pytest.raises(type(e), match=None):
                getattr(G, name)(*map(torchish.tensor, args), **kw)
            continue
        _same_bits(getattr(G, name)(*map(torchish.tensor, args), **kw), ref)


def test_normalize_bad_input_errors():
    for lib, fn in ((torch, F.normalize), (torchish, G.normalize)):
        msgs = []
        for x, dim in ((lib.arange(6).reshape(2, 3), 1), (lib.ones(2, 3), 2)):
            with pytest.raises((RuntimeError, IndexError)) as info:
                fn(x, dim=dim)
            msgs.append((info.type, str(info.value)))
        if lib is torch:
            ref = msgs
    assert msgs == ref
