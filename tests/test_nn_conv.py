"""Convolution, pooling and resampling (F.conv*, *pool*, interpolate, grid_sample, affine_grid,
pixel/channel shuffle, unfold/fold) and their modules, differential against real PyTorch:
forward values, grad_fn names, input/weight gradients, default init, reprs, error texts."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402
import torchish.nn as tnn  # noqa: E402
import torchish.nn.functional as TF  # noqa: E402
from warn_once_runs import stdout_of_both  # noqa: E402

F = torch.nn.functional
F64, F32 = np.float64, np.float32
TOL = {F64: dict(rtol=1e-10, atol=1e-12), F32: dict(rtol=1e-5, atol=1e-5)}


def _np(t):
    return np.asarray(t.detach()._data)


def _rand(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


def check(name, arrays, *args, dtype=F64, grad=True, seed=0, **kwargs):
    """Run F.<name> in both libraries on `arrays` (NumPy, made tensors) then `args`;
    compare outputs (auxiliary outputs exactly), grad_fn names and, with `grad`, the
    gradients of every floating input for a random cotangent."""
    ta, ja = [], []
    for a in arrays:
        if a is None or not isinstance(a, np.ndarray):
            ta.append(a)
            ja.append(a)
            continue
        floating = a.dtype.kind == "f"
        a = a.astype(dtype) if floating else a
        ta.append(torch.tensor(a, requires_grad=grad and floating))
        ja.append(torchish.tensor(a, requires_grad=grad and floating))
    t_out = getattr(F, name)(*ta, *args, **kwargs)
    j_out = getattr(TF, name)(*ja, *args, **kwargs)
    if isinstance(t_out, tuple):
        for t_aux, j_aux in zip(t_out[1:], j_out[1:]):
            assert str(t_aux.dtype) == str(j_aux.dtype)
            np.testing.assert_array_equal(t_aux.cpu().numpy(), _np(j_aux))
        t_out, j_out = t_out[0], j_out[0]
    expected = t_out.detach().cpu().numpy()
    assert expected.shape == tuple(j_out.shape)
    assert str(t_out.dtype) == str(j_out.dtype)
    np.testing.assert_allclose(_np(j_out), expected, **TOL[dtype])
    if not grad:
        return j_out
    assert j_out.grad_fn.name() == type(t_out.grad_fn).__name__
    ct = _rand(seed + 1, *expected.shape).astype(expected.dtype)
    t_out.backward(torch.tensor(ct))
    j_out.backward(torchish.tensor(ct))
    for t, j in zip(ta, ja):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            np.testing.assert_allclose(_np(j.grad), t.grad.cpu().numpy(), **TOL[dtype])
    return j_out


def raises_like(fn_t, fn_j):
    with pytest.raises(Exception) as t_err:
        fn_t()
    with pytest.raises(type(t_err.value)) as j_err:
        fn_j()
    assert str(j_err.value) == str(t_err.value)


# ---- convolution ------------------------------------------------------------------------

CONV = [
    ("conv2d", (2, 4, 7, 6), (6, 4, 3, 3), dict(stride=2, padding=1)),
    ("conv2d", (2, 4, 7, 6), (6, 2, 3, 2), dict(stride=(1, 2), padding=(2, 0),
                                               dilation=(2, 1), groups=2)),
    ("conv2d", (4, 7, 6), (6, 4, 3, 3), dict(padding="same")),
    ("conv2d", (1, 4, 7, 6), (6, 4, 4, 4), dict(padding="same", dilation=2)),
    ("conv2d", (1, 4, 5, 5), (4, 1, 3, 3), dict(padding="valid", groups=4)),
    ("conv1d", (2, 4, 9), (6, 4, 3), dict(stride=2)),
    ("conv1d", (3, 9), (6, 1, 4), dict(groups=3, padding=2, dilation=2)),
    ("conv3d", (2, 2, 5, 6, 4), (4, 2, 3, 2, 3), dict(stride=(1, 2, 1), padding=1)),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), dict(stride=2, padding=1,
                                                         output_padding=1)),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 2), dict(stride=(2, 3), padding=(2, 0),
                                                         output_padding=(0, 1), groups=2,
                                                         dilation=(1, 2))),
    ("conv_transpose2d", (4, 5, 6), (4, 3, 2, 2), dict(padding=2)),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), dict(stride=3, padding=1, output_padding=2)),
    ("conv_transpose3d", (1, 2, 3, 4, 3), (2, 3, 2, 3, 2), dict(stride=2)),
]


@pytest.mark.parametrize("name,xs,ws,kw", CONV)
def test_conv(name, xs, ws, kw):
    out_channels = ws[0] if "transpose" not in name else ws[1] * kw.get("groups", 1)
    check(name, [_rand(0, *xs), _rand(1, *ws), _rand(2, out_channels)], **kw)


@pytest.mark.parametrize("name,xs,ws,kw", [CONV[0], CONV[1], CONV[8], CONV[12]])
def test_conv_float32_no_bias(name, xs, ws, kw):
    check(name, [_rand(0, *xs), _rand(1, *ws)], dtype=F32, **kw)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("nd", [1, 2])
def test_conv_half_bias_rounds_once(dtype, nd):
    # PyTorch's CPU kernels accumulate a half-precision convolution in float32, add the bias
    # there and round once (rounding the convolution before the bias differs in ~1/3 of
    # the bfloat16 elements)
    x, w, b = _rand(0, 2, 3, *(8,) * nd), _rand(1, 4, 3, *(3,) * nd), _rand(2, 4)
    outs = []
    for T in (torch, torchish):
        args = [T.tensor(a, dtype=getattr(T, dtype)) for a in (x, w, b)]
        outs.append(getattr(T.nn.functional, f"conv{nd}d")(*args, padding=1))
    assert str(outs[0].dtype) == str(outs[1].dtype)
    np.testing.assert_array_equal(outs[0].float().numpy(), _np(outs[1].float()))


def test_conv_errors():
    x, w = torch.zeros(2, 4, 5, 5), torch.zeros(3, 3, 3, 3)
    jx, jw = torchish.zeros(2, 4, 5, 5), torchish.zeros(3, 3, 3, 3)
    cases = [((w,), {}), ((torch.zeros(3, 4, 7, 7),), {}),
             ((torch.zeros(3, 4, 3, 3),), dict(stride=2, padding="same")),
             ((torch.zeros(3, 4, 3, 3),), dict(padding="foo")),
             ((torch.zeros(3, 4, 3, 3), torch.zeros(4)), {}),
             ((torch.zeros(4, 2, 3, 3),), dict(groups=3))]
    for args, kw in cases:
        jargs = [torchish.zeros(*a.shape) for a in args]
        raises_like(lambda: F.conv2d(x, *args, **kw), lambda: TF.conv2d(jx, *jargs, **kw))
    raises_like(lambda: F.conv2d(x.double(), torch.zeros(3, 4, 3, 3)),
                lambda: TF.conv2d(jx.double(), torchish.zeros(3, 4, 3, 3)))
    raises_like(lambda: F.conv_transpose2d(x, w), lambda: TF.conv_transpose2d(jx, jw))
    raises_like(lambda: F.conv_transpose2d(x, torch.zeros(4, 3, 3, 3), output_padding=1),
                lambda: TF.conv_transpose2d(jx, torchish.zeros(4, 3, 3, 3), output_padding=1))


D64, BF16 = "float64", "bfloat16"


@pytest.mark.parametrize("name,xs,ws,kw", [
    # ATen checks a mismatched weight dtype after the shapes, in the words of the backend it
    # picked: oneDNN (a float32 input with groups, a batch, a kernel over 3x3 or a large
    # input) or the slow kernels
    ("conv2d", (2, 3, 8, 8), (2, 3, 3, 3, D64), {}),
    ("conv2d", (1, 3, 8, 8), (2, 3, 3, 3, D64), {}),
    ("conv2d", (1, 3, 8, 8), (2, 3, 5, 5, D64), {}),
    ("conv2d", (1, 3, 8, 8), (2, 3, 5, 3, D64), {}),
    ("conv2d", (1, 1, 1, 20481), (2, 1, 1, 3, D64), {}),
    ("conv2d", (1, 3, 8, 8), (3, 1, 3, 3, BF16), dict(groups=3)),
    ("conv2d", (2, 3, 8, 8), (2, 3, 3, 3, "int64"), {}),
    ("conv2d", (2, 3, 8, 8), (2, 3, 3, 3, "complex64"), {}),
    ("conv2d", (2, 3, 8, 8), (2, 3, 3, 3, "bool"), {}),
    ("conv2d", (3, 8, 8), (2, 3, 5, 5, D64), dict(padding="same")),
    ("conv2d", (2, 3, 2, 2), (2, 3, 3, 3, D64), {}),
    ("conv2d", (2, 3, 8, 8), (2, 2, 3, 3, D64), {}),
    ("conv1d", (1, 3, 8), (2, 3, 5, D64), {}),
    ("conv1d", (1, 3, 8), (3, 1, 5, D64), dict(groups=3)),
    ("conv3d", (1, 3, 8, 8, 8), (2, 3, 5, 5, 5, D64), {}),
    ("conv3d", (1, 1, 30, 30, 30), (2, 1, 3, 3, 3, D64), {}),
    ("conv_transpose2d", (2, 3, 4, 4), (3, 2, 3, 3, D64), {}),
    ("conv_transpose2d", (1, 3, 4, 4), (3, 2, 3, 3, D64), {}),
    ("conv_transpose2d", (2, 3, 1, 1), (3, 2, 3, 3, D64), dict(padding=2)),
    ("conv_transpose2d", (1, 3, 1, 1), (3, 2, 3, 3, D64), dict(padding=2)),
    ("conv_transpose2d", (2, 3, 4, 4), (3, 2, 3, 3, D64), dict(output_padding=1, dilation=2)),
    ("conv_transpose1d", (2, 3, 8), (3, 2, 3, D64), {}),
])
def test_conv_weight_dtype_errors(name, xs, ws, kw):
    def run(L):
        w = L.ones(*ws[:-1], dtype=getattr(L, ws[-1]))
        getattr(L.nn.functional, name)(L.ones(*xs), w, **kw)
    raises_like(lambda: run(torch), lambda: run(torchish))


def test_conv_transpose_bias_dtype():
    # oneDNN refuses a bias of another dtype; the slow kernel (a batch of one, a small
    # kernel) adds it in the input's dtype
    raises_like(lambda: F.conv_transpose2d(torch.ones(2, 3, 4, 4), torch.ones(3, 2, 3, 3),
                                           torch.ones(2, dtype=torch.float64)),
                lambda: TF.conv_transpose2d(torchish.ones(2, 3, 4, 4), torchish.ones(3, 2, 3, 3),
                                            torchish.ones(2, dtype=torchish.float64)))
    outs = []
    for L in (torch, torchish):
        b = L.tensor([0.5, -1.0], dtype=L.float64, requires_grad=True)
        y = L.nn.functional.conv_transpose2d(L.ones(1, 3, 4, 4), L.ones(3, 2, 3, 3), b)
        y.sum().backward()
        outs.append((str(y.dtype), y.sum().item(), str(b.grad.dtype), b.grad.tolist()))
    assert outs[1] == outs[0]


@pytest.mark.parametrize("cls,args,kw", [
    ("Conv1d", (4, 6, 5), dict(groups=2, bias=False)),
    ("Conv2d", (3, 8, 3), dict(padding=1, padding_mode="reflect")),
    ("Conv2d", (3, 4, (3, 2)), dict(padding="same", dilation=(1, 2), padding_mode="circular")),
    ("Conv2d", (3, 4, 3), dict(padding=(2, 1), stride=2, padding_mode="replicate")),
    ("Conv3d", (2, 3, 2), dict(stride=(1, 2, 1))),
    ("ConvTranspose1d", (4, 2, 3), dict(stride=2, output_padding=1)),
    ("ConvTranspose2d", (4, 6, (2, 3)), dict(groups=2, stride=2, dilation=2)),
    ("ConvTranspose3d", (2, 2, 2), dict(padding=1, bias=False)),
])
def test_conv_modules(cls, args, kw):
    """Same seed -> same parameters (PyTorch's default init); same repr; same output."""
    torch.manual_seed(7)
    t_mod = getattr(torch.nn, cls)(*args, **kw)
    torchish.manual_seed(7)
    j_mod = getattr(tnn, cls)(*args, **kw)
    assert repr(j_mod) == repr(t_mod)
    assert [n for n, _ in j_mod.named_parameters()] == [n for n, _ in t_mod.named_parameters()]
    for (_, tp), (_, jp) in zip(t_mod.named_parameters(), j_mod.named_parameters()):
        np.testing.assert_array_equal(_np(jp), tp.detach().cpu().numpy())
    nd = int(cls[-2])
    x = _rand(3, 2, args[0], *([6] * nd)).astype(F32)
    t_out, j_out = t_mod(torch.tensor(x)), j_mod(torchish.tensor(x))
    np.testing.assert_allclose(_np(j_out), t_out.detach().cpu().numpy(), **TOL[F32])
    assert j_out.grad_fn.name() == type(t_out.grad_fn).__name__


def test_conv_transpose_output_size():
    torch.manual_seed(0)
    t_mod = torch.nn.ConvTranspose2d(3, 2, 3, stride=2)
    torchish.manual_seed(0)
    j_mod = tnn.ConvTranspose2d(3, 2, 3, stride=2)
    x = _rand(0, 1, 3, 4, 5).astype(F32)
    for size in [(9, 11), (10, 12), [1, 2, 10, 11]]:
        t_out = t_mod(torch.tensor(x), output_size=size)
        j_out = j_mod(torchish.tensor(x), output_size=size)
        np.testing.assert_allclose(_np(j_out), t_out.detach().cpu().numpy(), **TOL[F32])
    raises_like(lambda: t_mod(torch.tensor(x), output_size=(12, 12)),
                lambda: j_mod(torchish.tensor(x), output_size=(12, 12)))


# ---- pooling ----------------------------------------------------------------------------

MAX_POOL = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
            dict(kernel_size=3, stride=2, ceil_mode=True),
            dict(kernel_size=2, stride=3, ceil_mode=True, padding=1),
            dict(kernel_size=3, stride=2, padding=1, dilation=2, return_indices=True)]


@pytest.mark.parametrize("i", range(len(MAX_POOL)))
def test_max_pool(i):
    kw = MAX_POOL[i]
    check("max_pool2d", [_rand(0, 2, 3, 7, 6)], **kw)
    check("max_pool1d", [_rand(1, 2, 3, 9)], grad=i % 2 == 0, **kw)
    if i in (1, 4):
        check("max_pool3d", [_rand(2, 1, 2, 5, 6, 5)], return_indices=True,
              **{k: v for k, v in kw.items() if k != "return_indices"})


def test_max_pool_variants():
    check("max_pool2d", [_rand(0, 3, 7, 6)], (3, 2), (2, 1), (1, 1), (2, 1),
          return_indices=True)                                     # unbatched
    check("max_pool2d", [_rand(1, 1, 1, 5, 5)], 2, dtype=F32, return_indices=True)
    # ties: the first maximum of a window gets the index and the whole gradient
    x = np.array([[[[1., 1., 0.], [1., 1., 0.], [2., 2., 2.]]]])
    check("max_pool2d", [x], 2, 1, return_indices=True)
    check("max_pool2d_with_indices", [_rand(2, 2, 3, 5, 5)], 2, grad=False)


AVG_POOL = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
            dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
            dict(kernel_size=3, stride=2, ceil_mode=True, padding=1),
            dict(kernel_size=3, stride=2, ceil_mode=True, padding=1, count_include_pad=False)]


@pytest.mark.parametrize("i", range(len(AVG_POOL)))
def test_avg_pool(i):
    kw = AVG_POOL[i]
    check("avg_pool2d", [_rand(0, 2, 3, 7, 6)], **kw)
    check("avg_pool1d", [_rand(1, 2, 3, 8)], grad=i % 2 == 0, **kw)
    check("avg_pool3d", [_rand(2, 1, 2, 5, 6, 5)], grad=i % 2 == 1, **kw)


def test_avg_pool_variants():
    check("avg_pool2d", [_rand(0, 3, 7, 6)], (3, 2), padding=1, divisor_override=5)
    check("avg_pool3d", [_rand(1, 2, 2, 4, 4, 4)], 2, divisor_override=3)
    check("avg_pool2d", [_rand(2, 2, 3, 7, 6)], 3, 2, dtype=F32, ceil_mode=True)


@pytest.mark.parametrize("size", [3, (2, 4), (5, None), (7, 6), 1])
def test_adaptive_pool(size):
    check("adaptive_avg_pool2d", [_rand(0, 2, 3, 7, 6)], size)
    check("adaptive_max_pool2d", [_rand(1, 2, 3, 7, 6)], size, return_indices=True)


def test_adaptive_pool_1d_3d():
    for size in (3, 1):
        check("adaptive_avg_pool1d", [_rand(0, 2, 3, 7)], size)
        check("adaptive_max_pool1d", [_rand(1, 2, 3, 7)], size, return_indices=True)
    check("adaptive_avg_pool3d", [_rand(2, 1, 2, 5, 4, 6)], (2, 3, 4))
    check("adaptive_max_pool3d", [_rand(3, 1, 2, 5, 4, 6)], (3, 1, 4), return_indices=True)
    check("adaptive_max_pool2d", [_rand(4, 3, 7, 6)], (3, 4), dtype=F32)   # unbatched


def test_lp_pool():
    x = np.abs(_rand(0, 2, 3, 7, 6)) + 0.1
    check("lp_pool2d", [x], 2, 3, 2)
    check("lp_pool1d", [x[:, :, 0]], 3, 2)
    check("lp_pool2d", [x], float("inf"), 2)


def test_max_unpool():
    for shape, nd in [((2, 3, 6, 5), 2), ((2, 3, 7), 1), ((1, 2, 4, 6, 4), 3)]:
        x = _rand(0, *shape)
        values, t_idx = getattr(F, f"max_pool{nd}d")(torch.tensor(x), 2, return_indices=True)
        j_idx = getattr(TF, f"max_pool{nd}d")(torchish.tensor(x), 2, return_indices=True)[1]
        t_in = values.requires_grad_()
        j_in = torchish.tensor(values.detach().cpu().numpy(), requires_grad=True)
        t_out = getattr(F, f"max_unpool{nd}d")(t_in, t_idx, 2, output_size=shape[-nd:])
        j_out = getattr(TF, f"max_unpool{nd}d")(j_in, j_idx, 2, output_size=shape[-nd:])
        np.testing.assert_array_equal(_np(j_out), t_out.detach().cpu().numpy())
        assert j_out.grad_fn.name() == type(t_out.grad_fn).__name__
        t_out.sum().backward()
        j_out.sum().backward()
        np.testing.assert_array_equal(_np(j_in.grad), t_in.grad.cpu().numpy())


def test_max_unpool_invalid_index():
    # indices of a 5x5 pooling unpooled to the default 4x4 (no output_size): PyTorch's kernel
    # refuses an index outside the plane, naming the last one its loop met (which one, where
    # there are several, depends on how many threads PyTorch runs: compared on one)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        x = _rand(0, 1, 2, 5, 5)
        t_val, t_idx = F.max_pool2d(torch.tensor(x), 2, return_indices=True)
        j_val, j_idx = TF.max_pool2d(torchish.tensor(x), 2, return_indices=True)
        raises_like(lambda: F.max_unpool2d(t_val, t_idx, 2),
                    lambda: TF.max_unpool2d(j_val, j_idx, 2))
        bad = [[[0, -3], [2, -1]]]
        for nd, shape in [(1, (1, 1, 2)), (2, (1, 1, 2, 2)), (3, (1, 1, 1, 2, 2))]:
            t_i = torch.tensor(bad if nd != 1 else [[[0, 9]]]).reshape(shape)
            j_i = torchish.tensor(bad if nd != 1 else [[[0, 9]]]).reshape(shape)
            raises_like(lambda: getattr(F, f"max_unpool{nd}d")(torch.ones(shape), t_i, 2),
                        lambda: getattr(TF, f"max_unpool{nd}d")(torchish.ones(shape), j_i, 2))
    finally:
        torch.set_num_threads(threads)


def test_pool_errors():
    x, jx = torch.zeros(2, 4, 5, 5), torchish.zeros(2, 4, 5, 5)
    for fn, args in [("max_pool2d", (3, 1, 2)), ("max_pool2d", (7,)), ("avg_pool2d", (3, 1, 2)),
                     ("max_pool2d", (2, 0))]:
        raises_like(lambda: getattr(F, fn)(x, *args), lambda: getattr(TF, fn)(jx, *args))
    raises_like(lambda: F.max_pool1d(x[0], 2, padding=2), lambda: TF.max_pool1d(jx[0], 2,
                                                                                  padding=2))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64", "bool", "float16",
                                   "bfloat16", "complex64"])
@pytest.mark.parametrize("call", [
    "avg_pool1d(x[0, 0], 2)", "avg_pool2d(x[0], 2)", "avg_pool2d(x[0], 2, divisor_override=3)",
    "avg_pool3d(x, 2)", "lp_pool2d(x[0], 2, 2)", "max_pool1d(x[0, 0], 2)",
    "max_pool1d(x[0, 0], 2, return_indices=True)[0]", "max_pool2d(x[0], 2)", "max_pool3d(x, 2)",
    "max_pool2d(x[0], 5)", "avg_pool2d(x[0], 5)", "max_pool1d(x[0, 0], 0)",
])
def test_pool_dtypes(dtype, call):
    # ATen's CPU pooling kernels and their dtypes (checked after the shapes): average pooling
    # takes floating types and int64 (3-d: float, double, int64), max pooling no bool
    # (max_pool1d's values-only kernel floating types only)
    outs = []
    for L in (torch, torchish):
        x = L.arange(64).view(1, 1, 4, 4, 4).to(getattr(L, dtype))
        try:
            r = eval("F." + call, {"F": L.nn.functional, "x": x})
            outs.append((str(r.dtype), (r.real if r.is_complex() else r).tolist()))
        except Exception as e:
            outs.append((type(e).__name__, str(e)))
    assert outs[1][0] == outs[0][0]
    if isinstance(outs[0][1], str):
        assert outs[1][1] == outs[0][1]
    else:
        np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-6)


def test_avg_pool_half_rounds_once():
    # the CPU kernel sums and divides in float32 (rounding once); its backward accumulates
    # in the half type
    for dtype in ("float16", "bfloat16"):
        outs = []
        for L in (torch, torchish):
            x = (L.arange(36.0).view(1, 1, 6, 6) / 7).to(getattr(L, dtype)).requires_grad_()
            y = L.nn.functional.avg_pool2d(x, 3, stride=1, padding=1, divisor_override=7)
            z = L.nn.functional.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)
            (y.sum() + z.sum()).backward()
            outs.append([t.detach().float().tolist() for t in (y, z, x.grad)])
        assert outs[1] == outs[0], dtype


@pytest.mark.parametrize("size", ["(9, 9)", "[9, 9]", "torch.Size([9, 9])", "(1, 1, 9, 9)"])
def test_max_unpool_output_size_error_shows_sizes_as_passed(size):
    def run(L):
        val, idx = L.nn.functional.max_pool2d(L.arange(16.0).view(1, 1, 4, 4), 2,
                                              return_indices=True)
        L.nn.functional.max_unpool2d(val, idx, 2, output_size=eval(size, {"torch": L}))
    raises_like(lambda: run(torch), lambda: run(torchish))


@pytest.mark.parametrize("cls,args,kw", [
    ("MaxPool1d", (3,), dict(stride=2, padding=1)), ("MaxPool2d", ((3, 2),), dict(ceil_mode=True)),
    ("MaxPool3d", (2,), dict(return_indices=True)), ("AvgPool1d", (3,), dict(padding=1)),
    ("AvgPool2d", (3, 2), dict(count_include_pad=False, padding=1)),
    ("AvgPool3d", (2,), dict(divisor_override=3)), ("LPPool1d", (2, 3), {}),
    ("LPPool2d", (1.5, 2), dict(stride=1)), ("AdaptiveAvgPool1d", (3,), {}),
    ("AdaptiveAvgPool2d", ((None, 3),), {}), ("AdaptiveAvgPool3d", (2,), {}),
    ("AdaptiveMaxPool1d", (3,), {}), ("AdaptiveMaxPool2d", (2,), dict(return_indices=True)),
    ("AdaptiveMaxPool3d", ((2, 1, 2),), {}), ("MaxUnpool2d", (2,), {}),
    ("Upsample", (), dict(scale_factor=2)), ("Upsample", (), dict(size=(3, 4),
                                                                  mode="bilinear")),
    ("UpsamplingNearest2d", (), dict(scale_factor=(2, 3))),
    ("UpsamplingBilinear2d", (), dict(size=5)), ("PixelShuffle", (2,), {}),
    ("PixelUnshuffle", (3,), {}), ("ChannelShuffle", (2,), {}),
    ("Fold", ((4, 5), 2), dict(stride=(1, 2))), ("Unfold", (3,), dict(dilation=2, padding=1)),
])
def test_module_reprs(cls, args, kw):
    assert repr(getattr(tnn, cls)(*args, **kw)) == repr(getattr(torch.nn, cls)(*args, **kw))


def test_pool_modules_forward():
    x = _rand(0, 2, 4, 6, 6).astype(F32)
    for cls, args, kw in [("MaxPool2d", (3, 2, 1), {}), ("AvgPool2d", (2,), {}),
                          ("AdaptiveAvgPool2d", ((2, 3),), {}), ("LPPool2d", (2, 2), {}),
                          ("MaxPool2d", (2,), dict(return_indices=True))]:
        t_out = getattr(torch.nn, cls)(*args, **kw)(torch.tensor(x))
        j_out = getattr(tnn, cls)(*args, **kw)(torchish.tensor(x))
        if isinstance(t_out, tuple):
            np.testing.assert_array_equal(_np(j_out[1]), t_out[1].cpu().numpy())
            t_out, j_out = t_out[0], j_out[0]
        np.testing.assert_allclose(_np(j_out), t_out.cpu().numpy(), **TOL[F32])


# ---- interpolate ------------------------------------------------------------------------

SIZES_2D = [dict(scale_factor=2), dict(scale_factor=1.7), dict(scale_factor=(0.6, 2.3)),
            dict(size=(7, 3)), dict(size=(1, 1)), dict(scale_factor=1.7,
                                                       recompute_scale_factor=True)]


@pytest.mark.parametrize("mode,align_corners", [("nearest", None), ("nearest-exact", None),
                                                ("bilinear", False), ("bilinear", True),
                                                ("bicubic", False), ("bicubic", True),
                                                ("area", None)])
def test_interpolate_2d(mode, align_corners):
    x = _rand(0, 2, 3, 5, 4)
    for i, kw in enumerate(SIZES_2D):   # gradients for a couple of sizes only (compile time)
        check("interpolate", [x], mode=mode, align_corners=align_corners, grad=i in (1, 3),
              **kw)
    check("interpolate", [x], mode=mode, align_corners=align_corners, dtype=F32,
          scale_factor=(3, 0.5), grad=False)


@pytest.mark.parametrize("mode,align_corners", [("nearest", None), ("nearest-exact", None),
                                                ("linear", False), ("linear", True),
                                                ("area", None)])
def test_interpolate_1d(mode, align_corners):
    x = _rand(1, 2, 3, 7)
    for i, kw in enumerate([dict(scale_factor=1.3), dict(size=13), dict(scale_factor=0.5)]):
        check("interpolate", [x], mode=mode, align_corners=align_corners, grad=i == 0, **kw)


@pytest.mark.parametrize("mode,align_corners", [("nearest", None), ("trilinear", False),
                                                ("trilinear", True), ("nearest-exact", None)])
def test_interpolate_3d(mode, align_corners):
    x = _rand(2, 1, 2, 3, 4, 5)
    check("interpolate", [x], mode=mode, align_corners=align_corners,
          scale_factor=(1.5, 0.7, 2.2))
    check("interpolate", [x], mode=mode, align_corners=align_corners, size=(4, 3, 7),
          grad=False)


@pytest.mark.parametrize("dtype", ["int64", "uint8", "int32", "bool", "complex64"])
def test_interpolate_and_adaptive_pool_dtypes(dtype):
    # kernels for floating types only (uint8 too for nearest, bilinear, bicubic): the error
    # names PyTorch's CPU kernel; a 3-D/5-D input to bicubic gets the generic rank message
    for shape in [(1, 2, 4), (1, 2, 4, 4), (1, 2, 2, 2, 2)]:
        for mode in ["nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear",
                     "area"]:
            if dtype == "uint8" and mode in ("bilinear", "bicubic") and len(shape) == 4:
                continue   # computed (see test_interpolate_uint8)
            t_x = torch.ones(shape, dtype=getattr(torch, dtype))
            j_x = torchish.ones(shape, dtype=getattr(torchish, dtype))
            t_err, j_err = None, None
            try:
                t_out = F.interpolate(t_x, scale_factor=2, mode=mode)
            except Exception as e:  # noqa: BLE001
                t_err = e
            try:
                j_out = TF.interpolate(j_x, scale_factor=2, mode=mode)
            except Exception as e:  # noqa: BLE001
                j_err = e
            if t_err is None:
                assert j_err is None, j_err
                np.testing.assert_array_equal(_np(j_out), t_out.numpy())
            else:
                assert type(j_err) is type(t_err) and str(j_err) == str(t_err)
    for name, nd in [("adaptive_avg_pool1d", 1), ("adaptive_avg_pool2d", 2),
                     ("adaptive_avg_pool3d", 3), ("adaptive_max_pool1d", 1),
                     ("adaptive_max_pool2d", 2), ("adaptive_max_pool3d", 3)]:
        shape = (1, 2) + (4,) * nd
        raises_like(lambda: getattr(F, name)(torch.ones(shape, dtype=getattr(torch, dtype)), 2),
                    lambda: getattr(TF, name)(torchish.ones(shape,
                                                            dtype=getattr(torchish, dtype)), 2))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [False, True])
def test_interpolate_uint8(mode, antialias):
    # uint8 images (torchvision's Resize): ATen's separable int16 fixed-point kernels, each
    # pass rounded to uint8; bicubic without antialias clamps its taps at the borders
    x = np.random.default_rng(0).integers(0, 256, (2, 3, 7, 9)).astype(np.uint8)
    for align in (False, True):
        for kw in [dict(size=(11, 13)), dict(size=(3, 4)), dict(size=(7, 4)),
                   dict(scale_factor=(0.6, 2.3)), dict(scale_factor=0.35)]:
            t_out = F.interpolate(torch.tensor(x), mode=mode, align_corners=align,
                                  antialias=antialias, **kw)
            j_out = TF.interpolate(torchish.tensor(x), mode=mode, align_corners=align,
                                   antialias=antialias, **kw)
            assert str(j_out.dtype) == "torch.uint8"
            np.testing.assert_array_equal(_np(j_out), t_out.numpy())


def test_interpolate_errors():
    x, jx = torch.zeros(1, 2, 4, 4), torchish.zeros(1, 2, 4, 4)
    for kw in [dict(size=2, scale_factor=2), dict(mode="nearest", align_corners=True),
               dict(size=(0, 3)), dict(size=(2, 2, 2)), dict(mode="linear", size=3), dict()]:
        raises_like(lambda: F.interpolate(x, **kw), lambda: TF.interpolate(jx, **kw))


# ---- grid_sample, affine_grid -----------------------------------------------------------

@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_2d(mode, padding_mode):
    grid = np.random.default_rng(5).uniform(-1.3, 1.3, (2, 6, 6, 2))
    # points on the borders themselves (+-1 with align_corners=True), which PyTorch's
    # clip_coordinates_set_grad treats as out of bounds: no gradient for the grid there
    # (one row of the grid: one compile per align_corners)
    edges = np.array([[[[-1.2, -1.0], [-1.0, 0.3], [1.0, 1.0], [0.5, 1.5], [0.2, -0.3],
                        [1.3, 0.9]]]] * 2)
    for align in (False, True):
        check("grid_sample", [_rand(0, 2, 3, 5, 4), np.concatenate([grid, edges], 1)],
              mode=mode, padding_mode=padding_mode, align_corners=align)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_3d(mode):
    grid = np.random.default_rng(6).uniform(-1.3, 1.3, (2, 2, 3, 3, 3))
    for pm in ["zeros", "border", "reflection"]:
        for align in (False, True):
            check("grid_sample", [_rand(0, 2, 2, 4, 3, 5), grid], mode=mode, padding_mode=pm,
                  align_corners=align)


def test_grid_sample_float32_and_warning():
    grid = np.random.default_rng(7).uniform(-1.1, 1.1, (1, 4, 4, 2))
    check("grid_sample", [_rand(0, 1, 2, 5, 5), grid], dtype=F32, align_corners=False)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        TF.grid_sample(torchish.zeros(1, 1, 2, 2), torchish.zeros(1, 1, 1, 2))


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(align):
    check("affine_grid", [_rand(0, 2, 2, 3)], [2, 3, 5, 4], align_corners=align)
    check("affine_grid", [_rand(1, 2, 3, 4)], [2, 3, 5, 4, 3], align_corners=align)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check("affine_grid", [_rand(2, 1, 2, 3)], [1, 1, 1, 6], align_corners=align,
              dtype=F32, grad=False)


def test_affine_grid_errors_show_size_as_passed():
    for size in [(2, 3, 4), [2, 3, 4], "Size", (2, 3, 4, 4, 4), [2, 3, 0, 4]]:
        raises_like(lambda: F.affine_grid(torch.zeros(2, 2, 3), torch.Size([2, 3, 4]) if size
                                          == "Size" else size, align_corners=False),
                    lambda: TF.affine_grid(torchish.zeros(2, 2, 3), torchish.Size([2, 3, 4])
                                           if size == "Size" else size, align_corners=False))


@pytest.mark.parametrize("theta,size", [((1, 2, 3), (2, 1, 2, 2)), ((3, 2, 3), (2, 1, 2, 2)),
                                        ((1, 3, 4), (2, 1, 2, 2, 2))])
def test_affine_grid_batch_mismatch(theta, size):
    # ATen's bmm of the base grid by theta's transpose
    raises_like(lambda: F.affine_grid(torch.zeros(theta), size, align_corners=False),
                lambda: TF.affine_grid(torchish.zeros(theta), size, align_corners=False))


GRID_DTYPES = ["uint8", "int64", "float16", "float32", "float64", "complex64"]


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("x_dtype", GRID_DTYPES)
@pytest.mark.parametrize("g_dtype", ["float32", "float64"])
def test_grid_sample_dtypes(nd, x_dtype, g_dtype):
    # the CPU kernels take floating inputs, then a grid of the input's dtype
    outs = []
    for L in (torch, torchish):
        x = L.ones((1, 1) + (3,) * nd, dtype=getattr(L, x_dtype))
        g = L.zeros((1,) + (2,) * nd + (nd,), dtype=getattr(L, g_dtype))
        try:
            outs.append(str(L.nn.functional.grid_sample(x, g, align_corners=False).dtype))
        except Exception as e:
            outs.append(f"{type(e).__name__}: {e}")
    assert outs[1] == outs[0]


@pytest.mark.parametrize("shapes", [((1, 1, 3, 3), (2, 2, 2, 3)), ((1, 1, 0, 3), (1, 2, 2, 3)),
                                    ((1, 1, 0, 3), (1, 2, 2, 2)), ((1, 1, 3, 3), (1, 2, 2, 3)),
                                    ((1, 1, 3, 3, 3), (1, 2, 2, 2, 3), "bicubic")])
def test_grid_sample_shape_errors_in_atens_order(shapes):
    x, g, mode = shapes if len(shapes) == 3 else shapes + ("bilinear",)
    raises_like(lambda: F.grid_sample(torch.ones(x, dtype=torch.int64), torch.zeros(g), mode,
                                      align_corners=False),
                lambda: TF.grid_sample(torchish.ones(x, dtype=torchish.int64), torchish.zeros(g),
                                       mode, align_corners=False))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("shapes", [((0, 2, 3, 3), (0, 4, 4, 2)), ((1, 0, 3, 3), (1, 4, 4, 2)),
                                    ((1, 2, 3, 3), (1, 0, 4, 2))])
def test_grid_sample_empty(mode, shapes):
    outs = [tuple(L.nn.functional.grid_sample(L.ones(shapes[0]), L.zeros(shapes[1]), mode,
                                              align_corners=True).shape)
            for L in (torch, torchish)]
    assert outs[1] == outs[0]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64", "float16", "complex64"])
@pytest.mark.parametrize("call", ["unfold(L.arange(9).view(1, 1, 3, 3).to(d), 2)",
                                  "fold((L.arange(16).view(1, 4, 4) % 3 == 0).to(d), (3, 3), 2)",
                                  "fold(L.ones(1, 5, 4, dtype=d), (3, 3), 2)"])
def test_unfold_fold_dtypes(dtype, call):
    # im2col/col2im's CPU kernels: no integer types (bools overlap as `or`); checked after
    # the shapes
    outs = []
    for L in (torch, torchish):
        try:
            r = eval("L.nn.functional." + call, {"L": L, "d": getattr(L, dtype)})
            outs.append((str(r.dtype), (r.real if r.is_complex() else r).tolist()))
        except Exception as e:
            outs.append((type(e).__name__, str(e)))
    assert outs[1] == outs[0]


# ---- rearrangements ---------------------------------------------------------------------

def test_shuffles():
    check("pixel_shuffle", [_rand(0, 2, 8, 3, 4)], 2)
    check("pixel_shuffle", [_rand(1, 3, 2, 9, 3, 4)], 3, grad=False)
    check("pixel_unshuffle", [_rand(2, 2, 2, 6, 4)], 2)
    check("channel_shuffle", [_rand(3, 2, 6, 3, 4)], 3)
    for fn, args in [("pixel_shuffle", (3,)), ("pixel_unshuffle", (2,)),
                     ("channel_shuffle", (3,))]:
        raises_like(lambda: getattr(F, fn)(torch.zeros(2, 4, 5, 5), *args),
                    lambda: getattr(TF, fn)(torchish.zeros(2, 4, 5, 5), *args))


@pytest.mark.parametrize("kw", [dict(kernel_size=2),
                                dict(kernel_size=(2, 3), stride=(1, 2), padding=1,
                                     dilation=(2, 1))])
def test_unfold_fold(kw):
    cols = check("unfold", [_rand(0, 2, 3, 7, 6)], **kw)
    check("unfold", [_rand(1, 3, 7, 6)], grad=False, **kw)
    check("fold", [_rand(2, *cols.shape)], (7, 6), **kw)
    check("fold", [_rand(3, *cols.shape[1:])], (7, 6), grad=False, **kw)


def test_fold_errors():
    raises_like(lambda: F.unfold(torch.zeros(2, 4, 5, 5), 6),
                lambda: TF.unfold(torchish.zeros(2, 4, 5, 5), 6))
    raises_like(lambda: F.fold(torch.zeros(2, 16, 5), (3, 3), 2),
                lambda: TF.fold(torchish.zeros(2, 16, 5), (3, 3), 2))
    # im2col/col2im_shape_check: argument checks first (each in its op's order), then the
    # input's dims, read with Tensor.size's own errors
    for shape, kw in [((), {}), ((5,), {}), ((3, 4), {}), ((3, 4), dict(stride=0)),
                      ((2, 3, 4, 5, 6), {}), ((2, 0, 4, 4), {}), ((3, 0, 4), {}),
                      ((3, 4, 0), {}), ((1, 1, 1, 3), {}), ((1, 1, 3, 3), dict(padding=-1)),
                      ((1, 1, 3, 3), dict(kernel_size=0, dilation=0, padding=-1, stride=0)),
                      ((1, 1, 3, 3), dict(kernel_size=1, dilation=0, padding=-1, stride=0)),
                      ((1, 1, 3, 3), dict(kernel_size=(1, 0)))]:
        kw = dict(dict(kernel_size=2), **kw)
        raises_like(lambda: F.unfold(torch.zeros(shape), **kw),
                    lambda: TF.unfold(torchish.zeros(shape), **kw))
    for shape, out, kw in [((), (3, 3), {}), ((5,), (3, 3), {}), ((2, 3, 4, 5), (3, 3), {}),
                           ((2, 0, 4), (3, 3), {}), ((4, 0), (3, 3), {}), ((3, 4), (3, 3), {}),
                           ((1, 4, 4), (3, 3), dict(kernel_size=0, dilation=0, padding=-1,
                                                    stride=0)),
                           ((1, 4, 4), (3, 3), dict(dilation=0, padding=-1, stride=0)),
                           ((1, 4, 4), (3, 3), dict(dilation=0, padding=-1)),
                           ((1, 4, 4), (3, 3), dict(padding=-1)),
                           ((1, 4, 1), (0, 2), dict(kernel_size=1)),
                           ((1, 4, 1), (-1, 3), dict(kernel_size=1, padding=(1, 0)))]:
        kw = dict(dict(kernel_size=2), **kw)
        raises_like(lambda: F.fold(torch.zeros(shape), out, **kw),
                    lambda: TF.fold(torchish.zeros(shape), out, **kw))


_SAME_PADDING = """
import sys, warnings
t = __import__(sys.argv[1])
F = t.nn.functional
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    F.conv2d(t.ones(1, 1, 6, 6), t.ones(1, 1, 2, 2), padding="same", dilation=2)
    F.conv1d(t.ones(1, 1, 6), t.ones(1, 1, 3), padding="same")
    F.conv3d(t.ones(1, 1, 4, 4, 4), t.ones(1, 1, 1, 2, 1), padding="same", dilation=3)
    t.conv2d(t.ones(1, 1, 6, 6), t.ones(1, 1, 2, 2), padding="same")
    F.conv1d(t.ones(1, 6), t.ones(1, 1, 4), padding="same")
for w in caught:
    where = w.lineno if w.filename == __file__ else "library"
    print(repr((w.category.__name__, str(w.message).split(" (Triggered internally")[0], where)))
"""


def test_same_padding_odd_total_warns_once(tmp_path, monkeypatch, capsys):
    # ATen's TORCH_WARN_ONCE when d * (k - 1) is odd: once per process, at the user's line
    ours, theirs = stdout_of_both(_SAME_PADDING, tmp_path, monkeypatch, capsys)
    assert len(theirs.splitlines()) == 1 and "padding='same'" in theirs
    assert ours == theirs
