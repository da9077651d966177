"""F.fractional_max_pool2d/3d and nn.FractionalMaxPool2d/3d against real PyTorch: the same
samples pick the same windows (values, indices, gradients, grad_fn), samples drawn from the
seeded default generator match PyTorch's, and bad arguments raise PyTorch's errors."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _pair(shape, dtype="float32", seed=0, nan_at=None):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    # repeated values: ties inside windows must resolve to PyTorch's first maximum
    a = np.round(a * 2) / 2
    if nan_at is not None:
        a.reshape(-1)[list(nan_at)] = np.nan
    return (torchish.tensor(a).to(getattr(torchish, dtype)),
            torch.tensor(a).to(getattr(torch, dtype)))


def _samples(shape, dtype="float32", seed=1):
    u = np.random.default_rng(seed).random(shape).astype(np.float32)
    return torchish.tensor(u).to(getattr(torchish, dtype)), torch.tensor(u).to(getattr(torch,
                                                                                      dtype))


def _same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype)
    ours, theirs = ours.detach(), theirs.detach()
    if theirs.dtype.is_floating_point:
        ours, theirs = ours.double(), theirs.double()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert tuple(ours.shape) == tuple(theirs.shape)


CASES_2D = [
    ((2, 3, 9, 11), 2, (4, 5), None),
    ((2, 3, 9, 11), (3, 2), None, (0.5, 0.7)),
    ((3, 10, 10), 3, (5, 4), None),
    ((1, 2, 7, 8), 2, (6, 7), None),          # the largest output the sizes allow
    ((1, 1, 5, 6), 1, 1, None),
    ((1, 2, 8, 8), 0, (3, 3), None),          # an empty window: -inf at its start
]


CASES_3D = [
    ((2, 2, 6, 7, 9), 2, (3, 4, 5), None),
    ((2, 5, 6, 7), (2, 3, 2), None, (0.5, 0.6, 0.7)),
    ((1, 1, 5, 5, 5), 1, 4, None),
]
# (3-D: float16 left out to keep the suite short, float64 on one case: the windows of each
# dimension come from the 2-D cases' interval code, which they test in every dtype)
CASES = ([(2, *c, d) for c in CASES_2D for d in ("float32", "float64", "float16", "bfloat16")]
         + [(3, *c, d) for c in CASES_3D for d in ("float32", "bfloat16")]
         + [(3, *CASES_3D[0], "float64")])


@pytest.mark.parametrize("dims,shape,kernel,out,ratio,dtype", CASES)
def test_values_indices_grad(dims, shape, kernel, out, ratio, dtype):
    x, tx = _pair(shape, dtype)
    n = shape[0] if len(shape) == dims + 2 else 1
    u, tu = _samples((n, shape[-dims - 1], dims), dtype)
    x.requires_grad_(kernel != 0)
    tx.requires_grad_(kernel != 0)
    name = f"fractional_max_pool{dims}d"
    y, i = getattr(torchish.nn.functional, name)(
        x, kernel, out, ratio, return_indices=True, _random_samples=u)
    ty, ti = getattr(torch.nn.functional, name)(
        tx, kernel, out, ratio, return_indices=True, _random_samples=tu)
    _same(y, ty)
    _same(i, ti)
    if kernel != 0:
        assert y.grad_fn.name() == ty.grad_fn.name() == f"FractionalMaxPool{dims}DBackward0"
        g = np.random.default_rng(2).standard_normal(tuple(ty.shape)).astype(np.float32)
        y.backward(torchish.tensor(g).to(y.dtype))
        ty.backward(torch.tensor(g).to(ty.dtype))
        _same(x.grad, tx.grad)


def test_nan_and_ties_follow_atens_scan():
    x, tx = _pair((1, 1, 6, 6), nan_at=(0, 1, 7, 14, 15, 35))
    u, tu = _samples((1, 1, 2))
    y, i = torchish.nn.functional.fractional_max_pool2d(x, 3, 3, return_indices=True,
                                                        _random_samples=u)
    ty, ti = torch.nn.functional.fractional_max_pool2d(tx, 3, 3, return_indices=True,
                                                       _random_samples=tu)
    _same(y, ty)
    _same(i, ti)


@pytest.mark.parametrize("nd", [2, 3])
def test_seeded_samples_match_pytorch(nd):
    shape = (2, 3) + (9,) * nd
    x, tx = _pair(shape)
    fn = f"fractional_max_pool{nd}d"
    torchish.manual_seed(123)
    torch.manual_seed(123)
    for _ in range(2):   # the generator advances as PyTorch's does
        y, i = getattr(torchish.nn.functional, fn)(x, 2, output_ratio=(0.6,) * nd,
                                                   return_indices=True)
        ty, ti = getattr(torch.nn.functional, fn)(tx, 2, output_ratio=(0.6,) * nd,
                                                  return_indices=True)
        _same(y, ty)
        _same(i, ti)
    module = getattr(torchish.nn, f"FractionalMaxPool{nd}d")(3, output_size=4)
    tmodule = getattr(torch.nn, f"FractionalMaxPool{nd}d")(3, output_size=4)
    _same(module(x), tmodule(tx))
    assert repr(module) == repr(tmodule)
    assert module.kernel_size == tmodule.kernel_size
    assert module.output_size == tmodule.output_size
    assert list(module.state_dict()) == list(tmodule.state_dict())


def test_module_with_samples_buffer():
    x, tx = _pair((2, 3, 8, 8))
    u, tu = _samples((2, 3, 2))
    m = torchish.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True,
                                        _random_samples=u)
    tm = torch.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True,
                                      _random_samples=tu)
    for a, b in zip(m(x), tm(tx)):
        _same(a, b)
    assert list(m.state_dict()) == list(tm.state_dict()) == ["_random_samples"]
    assert m.output_ratio == tm.output_ratio


def _error(T, program):
    F = T.nn.functional
    x, x3 = T.ones(2, 3, 7, 8), T.ones(2, 3, 5, 7, 8)
    s2, s3 = T.full((2, 3, 2), 0.5), T.full((2, 3, 3), 0.5)
    try:
        out = eval(program, {"T": T, "F": F, "x": x, "x3": x3, "s2": s2, "s3": s3})  # noqa: S307
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return type(e).__name__, str(e)
    return "ok", [tuple(t.shape) for t in out] if isinstance(out, tuple) else tuple(out.shape)


ERRORS = [
    "F.fractional_max_pool2d(x, 2)",
    "F.fractional_max_pool2d(x, 2, output_ratio=0.5)",
    "F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5))",
    "F.fractional_max_pool2d(x, 2, output_ratio=[0.5])",
    "F.fractional_max_pool2d(x, 2, output_size=3, output_ratio=(0.5, 0.5))",
    "F.fractional_max_pool2d(x, (2, 2, 2), output_size=3)",
    "F.fractional_max_pool2d(x, [2], output_size=3)",
    "F.fractional_max_pool2d(x, 2.0, output_size=3)",
    "F.fractional_max_pool2d(x, 2, output_size=(3, 3, 3))",
    "F.fractional_max_pool2d(x, 2, output_size=(7, 4))",
    "F.fractional_max_pool2d(x, 2, output_size=(3, 8))",
    "F.fractional_max_pool2d(x, 2, output_size=(6, 7), _random_samples=s2)",
    "F.fractional_max_pool2d(T.ones(1, 1, 1, 7, 8), 2, output_size=3)",
    "F.fractional_max_pool2d(T.ones(2, 0, 7, 8), 2, output_size=3)",
    "F.fractional_max_pool2d(T.ones(0, 3, 7, 8), 2, output_size=3)",
    "F.fractional_max_pool2d(x, 2, output_size=(0, 3), _random_samples=s2)",
    "F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s2.double())",
    "F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s2[0])",
    "F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s2[:1])",
    "F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s2[:, :2])",
    "F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s3)",
    "F.fractional_max_pool2d(x, 2, output_size=(7, 3), _random_samples=s2.double())",
    "F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=T.rand(5, 3, 2))",
    "F.fractional_max_pool2d(x.long(), 2, output_size=3, _random_samples=s2.long())",
    "F.fractional_max_pool2d(x.long(), 2, output_size=3)",   # torch.rand(dtype=long) refuses
    "F.fractional_max_pool2d(x.to(T.complex64), 2, 3, _random_samples=s2.to(T.complex64))",
    "F.fractional_max_pool3d(x3, 2, output_size=3, _random_samples=s3)",
    "F.fractional_max_pool3d(x3, 2)",
    "F.fractional_max_pool3d(x3, 2, output_ratio=0.5, return_indices=True)",
    "F.fractional_max_pool3d(T.ones(7, 8, 9), 2, output_size=3)",
    "F.fractional_max_pool3d(x3, 2, output_size=(4, 3, 3), _random_samples=s3)",
    "F.fractional_max_pool3d(x3, 2, output_size=(3, 6, 3), _random_samples=s3)",
    "F.fractional_max_pool3d(x3, 2, output_size=(3, 3, 7), _random_samples=s3)",
    "F.fractional_max_pool3d(x3, (2, 2), output_size=3)",
    "F.fractional_max_pool3d(x3, 2, output_size=(3, 3))",
    "F.fractional_max_pool3d(x3, 2, output_size=3, _random_samples=s2)",
    "F.fractional_max_pool3d(x3, 2, output_size=3, _random_samples=s3[:1])",
    "F.fractional_max_pool3d(x3, 2, output_size=3, _random_samples=s3.double())",
    "F.fractional_max_pool3d(T.ones(2, 3, 0, 7, 8), 2, output_size=3)",
    "F.fractional_max_pool3d(T.ones(1, 2, 3, 5, 7, 8), 2, output_size=3)",
    "F.fractional_max_pool3d(x3.long(), 2, output_size=3, _random_samples=s3.long())",
    "T.nn.FractionalMaxPool2d(2)",
    "T.nn.FractionalMaxPool2d(2, 3, 0.5)",
    "T.nn.FractionalMaxPool2d(2, output_ratio=1.0)",
    "T.nn.FractionalMaxPool3d(0, output_ratio=0.5)",
    "T.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 1.5))",
]


@pytest.mark.parametrize("program", ERRORS)
def test_errors_match_pytorch(program):
    assert _error(torchish, program) == _error(torch, program)


@pytest.mark.parametrize("nd", [2, 3])
def test_saved_tensors_packed_as_pytorch(nd):
    # FractionalMaxPool{2,3}DBackward0 keeps the input and the indices (result1)
    def packed(T):
        x = T.ones((1, 2) + (6,) * nd, requires_grad=True)
        shapes = []
        with T.autograd.graph.saved_tensors_hooks(lambda t: shapes.append(
                (tuple(t.shape), str(t.dtype))) or t, lambda t: t):
            getattr(T.nn.functional, f"fractional_max_pool{nd}d")(x, 2, output_size=3)
        return shapes
    assert packed(torchish) == packed(torch)
