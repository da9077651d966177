"""torch.lobpcg (dense, method "ortho") against real PyTorch: with the same seed (the same
initial X from randn) the eigenpairs agree to rounding; generalized (B), batched, smallest,
a given X, and the argument errors."""
import warnings

import numpy as np
import pytest

import torchish
from differential import raises_same

torch = pytest.importorskip("torch")


def _np(t):
    return np.asarray(t.detach().cpu().tolist()).reshape(tuple(t.shape))


def _spd(shape, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    a = a @ np.swapaxes(a, -1, -2)
    return a + shift * np.eye(shape[-1]) + np.diag(np.arange(shape[-1], dtype=float))


def _both(a, b=None, x=None, seed=0, **kw):
    out = []
    for T, fn in ((torchish, torchish.lobpcg), (torch, torch.lobpcg)):
        T.manual_seed(seed)
        args = {key: None if v is None else T.tensor(v) for key, v in
                (("B", b), ("X", x))}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(fn(T.tensor(a), **args, **kw))
    return out


@pytest.mark.parametrize("kw", [{"k": 2}, {"k": 1, "n": 3, "largest": False}])
def test_matches_pytorch(kw):
    (e, x), (et, xt) = _both(_spd((12, 12), 0), seed=3, **kw)
    assert str(e.dtype) == str(et.dtype) and tuple(x.shape) == tuple(xt.shape)
    np.testing.assert_allclose(_np(e), et.numpy(), rtol=1e-10)
    # eigenvectors are defined up to sign
    np.testing.assert_allclose(np.abs(_np(x)), np.abs(xt.numpy()), atol=1e-8)


def test_generalized_batched_and_given_x():
    a = _spd((2, 15, 15), 1)
    b = _spd((2, 15, 15), 2, shift=15.0)
    x = np.random.default_rng(4).standard_normal((2, 15, 2))
    (e, v), (et, vt) = _both(a, b, x, k=2)
    np.testing.assert_allclose(_np(e), et.numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.abs(_np(v)), np.abs(vt.numpy()), atol=1e-8)


def test_float32():
    (e, x), (et, xt) = _both(_spd((12, 12), 5).astype(np.float32), seed=1, k=1)
    assert str(e.dtype) == str(et.dtype) == "torch.float32"
    np.testing.assert_allclose(_np(e), et.numpy(), rtol=1e-5)
    np.testing.assert_allclose(np.abs(_np(x)), np.abs(xt.numpy()), atol=1e-5)


@pytest.mark.parametrize("shapes,kw", [
    (((6, 6),), {"k": 3}),                      # m < 3 n
    (((6, 5),), {}),                            # not square
    (((6, 6), (5, 5)), {}),                     # B's shape
    (((9, 9), None, (9, 4)), {"k": 2, "n": 4}),  # given X: n from X
    (((9, 9), None, (8, 2)), {}),               # X's shape
])
def test_errors(shapes, kw):
    def call(T, fn):
        tensors = [None if s is None else T.ones(s, dtype=T.float64) for s in shapes]
        tensors += [None] * (3 - len(tensors))
        return fn(tensors[0], B=tensors[1], X=tensors[2], **kw)
    raises_same(lambda: call(torchish, torchish.lobpcg), lambda: call(torch, torch.lobpcg))


@pytest.mark.parametrize("k,largest", [(2, None), (3, False)])
def test_gradient_matches_pytorch(k, largest):
    # (the loss reads the eigenvectors through a sign-invariant function)
    a = _spd((12, 12), 6)
    w = np.random.default_rng(7).standard_normal((12, k))
    grads = []
    for T, fn in ((torchish, torchish.lobpcg), (torch, torch.lobpcg)):
        T.manual_seed(0)
        A = T.tensor(a, requires_grad=True)
        e, x = fn(A, k=k, largest=largest)
        assert type(e.grad_fn).__name__ == "LOBPCGAutogradFunctionBackward"
        (e.sum() * 0.3 + ((x * T.tensor(w)).sum(0) ** 2).sum()).backward()
        grads.append(_np(A.grad))
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-7)


def test_gradient_with_b_refused_as_pytorch():
    a, b = _spd((9, 9), 8), _spd((9, 9), 9, shift=9.0)
    errors = []
    for T, fn in ((torchish, torchish.lobpcg), (torch, torch.lobpcg)):
        T.manual_seed(0)
        e, _ = fn(T.tensor(a, requires_grad=True), k=1, B=T.tensor(b))
        with pytest.raises(ValueError) as info:
            e.sum().backward()
        errors.append(str(info.value))
    assert errors[0] == errors[1]
